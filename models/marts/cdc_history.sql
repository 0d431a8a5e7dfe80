{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['is_current', 'history_partition'],
        pre_hook='{{ cdc_history_prepare() }}',
        post_hook='{{ cdc_history_drop_emptied_partitions() }}',
    )
}}
-- depends_on: {{ ref('int_cdc_touched_keys') }}
-- depends_on: {{ ref('int_cdc_key_changes') }}
{#
    SCD type 2: one row per version of a source row. The changes of a key are ordered by
    their sequence (never by arrival); each insert, update or snapshot opens a version,
    each delete or truncate opens a deleted version. A delete that ends nothing (the key
    is already deleted) is dropped, so versions alternate as the source row did.

    Stored in two kinds of partitions: current versions by key bucket, closed versions by
    the landing batch of the run that closed them. An incremental run replays each
    touched key from its replay position (int_cdc_touched_keys), starting from the last
    version it had before that position, and rewrites the current versions of the
    touched buckets plus one new partition of the versions it closed. A late change
    (older than a key's current version) also rewrites the closed partitions holding the
    versions it changes (cdc_history_plan).
#}
{%- set plan = cdc_history_plan() -%}
{%- if execute %}{% do cdc_history_note_emptied_partitions(plan.emptied_partitions) %}{% endif -%}
{%- set closed_partition = plan.run_batch if plan.incremental
    else '(select max(load_batch_id) from ' ~ ref('int_cdc_records') ~ ')' -%}
{%- set change_columns = [
    'event_id', 'source_format', 'table_id', 'key_json', 'op', 'before_image', 'after_image',
    'after_image_is_partial', 'sequence_key', 'commit_ts', 'key_bucket', 'is_key_change',
] -%}
{%- set history_columns = [
    'table_id', 'key_json', 'version_number', 'valid_from', 'valid_to', 'is_deleted', 'op',
    'row_image', 'valid_from_sequence', 'valid_to_sequence', 'commit_ts', 'event_id',
    'source_format', 'key_bucket', 'is_current', 'history_partition',
] -%}
{% if plan.incremental and not plan.current_buckets %}
    -- nothing new: no partition is rewritten
    select {{ history_columns | join(', ') }}
    from {{ this }}
    where false
{% else %}
    with
    {% if plan.incremental %}
        touched_keys as (
            select
                table_id,
                key_json,
                key_bucket,
                replay_from_sequence
            from {{ ref('int_cdc_touched_keys') }}
        ),

        -- the partitions this run rewrites, as stored
        stored as (
            select {{ history_columns | join(', ') }}
            from {{ this }}
            where
                (is_current and history_partition in ({{ plan.current_buckets | join(', ') }}))
                {% if plan.closed_partitions %}
                    or (not is_current and history_partition in ({{ plan.closed_partitions | join(', ') }}))
                {% endif %}
        ),

        -- the stored versions of the touched keys, each with the last version the key had
        -- before its replay position: the replay starts from that one
        touched_versions as (
            select
                stored.*,
                max(if(stored.valid_from_sequence < touched_keys.replay_from_sequence, stored.version_number, null))
                    over (partition by stored.table_id, stored.key_json)
                    as prior_version_number
            from stored
            inner join touched_keys
                on
                    stored.table_id = touched_keys.table_id
                    and stored.key_json = touched_keys.key_json
        ),

        -- the prior version and every later one are recomputed
        recomputed_versions as (
            select
                table_id,
                key_json,
                version_number
            from touched_versions
            where version_number >= coalesce(prior_version_number, 0)
        ),

        kept_versions as (
            select stored.*
            from stored
            left anti join recomputed_versions
                on
                    stored.table_id = recomputed_versions.table_id
                    and stored.key_json = recomputed_versions.key_json
                    and stored.version_number = recomputed_versions.version_number
        ),

        -- the prior version re-enters the replay as its first change, numbered as it was
        prior_changes as (
            select
                event_id,
                source_format,
                table_id,
                key_json,
                op,
                if(is_deleted, row_image, null) as before_image,
                if(is_deleted, null, row_image) as after_image,
                false as after_image_is_partial,
                valid_from_sequence as sequence_key,
                commit_ts,
                key_bucket,
                false as is_key_change,
                valid_from as valid_from_floor,
                true as is_prior,
                version_number - 1 as version_offset
            from touched_versions
            where version_number = prior_version_number
        ),

        key_changes as (
            select
                {% for column in change_columns %}events.{{ column }},{% endfor %}
                events.commit_ts as valid_from_floor,
                false as is_prior,
                cast(null as int) as version_offset
            from {{ ref('cdc_events') }} as events
            inner join touched_keys
                on
                    events.table_id = touched_keys.table_id
                    and events.key_json = touched_keys.key_json
            where
                events.load_batch_id in ({{ (plan.event_batches or [-1]) | join(', ') }})
                and events.sequence_key >= touched_keys.replay_from_sequence
        ),

        table_keys as (
            select * from touched_keys
        ),
    {% else %}
        key_changes as (
            select
                {{ change_columns | join(', ') }},
                commit_ts as valid_from_floor,
                false as is_prior,
                cast(null as int) as version_offset
            from {{ ref('cdc_events') }}
            where key_json is not null
        ),

        table_keys as (
            select distinct
                table_id,
                key_json,
                key_bucket
            from key_changes
        ),
    {% endif %}

    truncates as (
        select
            event_id,
            source_format,
            table_id,
            sequence_key,
            commit_ts
        from {{ ref('cdc_events') }}
        where key_json is null
    ),

    -- a truncate ends the live version of every key of its table
    truncate_changes as (
        select
            truncates.event_id,
            truncates.source_format,
            table_keys.table_id,
            table_keys.key_json,
            'truncate' as op,
            cast(null as variant) as before_image,
            cast(null as variant) as after_image,
            false as after_image_is_partial,
            truncates.sequence_key,
            truncates.commit_ts,
            table_keys.key_bucket,
            false as is_key_change,
            truncates.commit_ts as valid_from_floor,
            false as is_prior,
            cast(null as int) as version_offset
        from table_keys
        inner join truncates
            on table_keys.table_id = truncates.table_id
        {% if plan.incremental %}
            where truncates.sequence_key >= table_keys.replay_from_sequence
        {% endif %}
    ),

    all_changes as (
        select * from key_changes
        union all
        select * from truncate_changes
        {% if plan.incremental %}
            union all
            select * from prior_changes
        {% endif %}
    ),

    {% if plan.key_change_rounds > 0 %}
        -- A key change with a partial after image starts the new key from the old key's row at
        -- that position: a `carry` row holding that row goes into the new key's changes just
        -- before the insert (`carry` sorts before every op), which is folded onto it and which
        -- it never outlives as a version. The old key's row comes from a replay of the old keys
        -- only; when it itself started with such a change, its own base is added along the
        -- chain, one round per link.
        carried_key_changes as (
            select key_changes.*
            from {{ ref('int_cdc_key_changes') }} as key_changes
            {% if plan.incremental %}
                inner join touched_keys
                    on
                        key_changes.table_id = touched_keys.table_id
                        and key_changes.to_key_json = touched_keys.key_json
                        and key_changes.sequence_key >= touched_keys.replay_from_sequence
            {% endif %}
        ),

        carried_from_keys as (
            select distinct
                table_id,
                from_key_json as key_json
            from carried_key_changes
        ),

        -- the old keys' changes; a key change into one of them starts from an empty row
        carried_from_changes as (
            select all_changes.*
            from all_changes
            left semi join carried_from_keys
                on
                    all_changes.table_id = carried_from_keys.table_id
                    and all_changes.key_json = carried_from_keys.key_json
            union all
            {{ cdc_history_carry_rows('carried_key_changes', "parse_json('{}')") }}
            left semi join carried_from_keys
                on
                    carried_key_changes.table_id = carried_from_keys.table_id
                    and carried_key_changes.to_key_json = carried_from_keys.key_json
        ),

        carried_from_replay as (
            select
                replay.*,
                -- the key change that started this row's image, if any
                first_value(if(replay.op = 'carry', replay.sequence_key, null)) over (
                    partition by replay.table_id, replay.key_json, replay.image_segment
                    order by replay.sequence_key, replay.op, replay.event_id
                ) as carried_since_sequence
            from ({{ cdc_history_fold('carried_from_changes', plan.partial_images) }}) as replay
        ),

        -- each old key's row just before each of its changes
        carried_from_rows as (
            select
                table_id,
                key_json,
                sequence_key,
                op,
                lag(live_image) over key_order as row_image,
                lag(carried_since_sequence) over key_order as carried_since_sequence
            from carried_from_replay
            window key_order as (partition by table_id, key_json order by sequence_key, op, event_id)
        ),

        -- each key change's old row as the replay saw it (without the base of the key change
        -- that started it, if any: carried_since_sequence)
        carried_images as (
            select
                carried_key_changes.*,
                carried_from_rows.row_image,
                carried_from_rows.carried_since_sequence
            from carried_key_changes
            left join carried_from_rows
                on
                    carried_key_changes.table_id = carried_from_rows.table_id
                    and carried_key_changes.from_key_json = carried_from_rows.key_json
                    and carried_key_changes.sequence_key = carried_from_rows.sequence_key
                    and carried_from_rows.op = 'delete'
        ),

        -- Each key change's base: its old row, over the base of the key change that started that
        -- row (carried_since_sequence), if any; one round per link of the longest chain
        -- (plan.key_change_rounds, usually 1).
        carried_bases_0 as (
            select
                table_id,
                to_key_json,
                sequence_key,
                cast(null as variant) as base_image
            from carried_images
            where false
        ),

        {% for round in range(1, plan.key_change_rounds + 1) %}
            carried_bases_{{ round }} as (
                select
                    carried_images.table_id,
                    carried_images.to_key_json,
                    carried_images.sequence_key,
                    case
                        when carried_images.carried_since_sequence is null then carried_images.row_image
                        else {{ cdc_overlay_image('parent.base_image', 'carried_images.row_image') }}
                    end as base_image
                from carried_images
                left join carried_bases_{{ round - 1 }} as parent
                    on
                        carried_images.table_id = parent.table_id
                        and carried_images.from_key_json = parent.to_key_json
                        and carried_images.carried_since_sequence = parent.sequence_key
            ),
        {% endfor %}

        carried_bases as (
            select
                table_id,
                to_key_json,
                sequence_key,
                base_image
            from carried_bases_{{ plan.key_change_rounds }}
        ),

        changes_to_fold as (
            select * from all_changes
            union all
            {{ cdc_history_carry_rows('carried_bases', 'carried_bases.base_image') }}
        ),
    {% else %}
        changes_to_fold as (
            select * from all_changes
        ),
    {% endif %}

    resolved as (
        {{ cdc_history_fold('changes_to_fold', plan.partial_images) }}
    ),

    versioned as (
        select
            table_id,
            key_json,
            op,
            is_deleted,
            -- a deleted version shows the row as it was when deleted: the before image, over the
            -- row as it was when the before image may be partial (a key change's, in SharePlex)
            case
                when not is_deleted then live_image
                when is_key_change and before_image is not null
                    then {{ cdc_overlay_image('lag(live_image) over key_order', 'before_image') }}
                else coalesce(before_image, lag(live_image) over key_order)
            end as row_image,
            -- valid_from never goes back in time, even if the source clock did
            max(valid_from_floor) over (
                partition by table_id, key_json order by sequence_key, op, event_id
                rows between unbounded preceding and current row
            ) as valid_from,
            sequence_key as valid_from_sequence,
            lead(sequence_key) over key_order as valid_to_sequence,
            commit_ts,
            event_id,
            source_format,
            key_bucket,
            row_number() over key_order
            + coalesce(max(version_offset) over (partition by table_id, key_json), 0) as version_number
        from resolved
        where op != 'carry'
        window key_order as (partition by table_id, key_json order by sequence_key, op, event_id)
    ),

    replayed as (
        select
            table_id,
            key_json,
            version_number,
            valid_from,
            -- in version order: valid_from_sequence, op, event_id order a key's versions as
            -- key_order did, so this window reuses that sort (version_number would sort again)
            lead(valid_from) over (
                partition by table_id, key_json order by valid_from_sequence, op, event_id
            ) as valid_to,
            is_deleted,
            op,
            row_image,
            valid_from_sequence,
            valid_to_sequence,
            commit_ts,
            event_id,
            source_format,
            key_bucket,
            valid_to_sequence is null as is_current,
            if(valid_to_sequence is null, key_bucket, {{ closed_partition }}) as history_partition
        from versioned
    )

    -- Each partition written as one file (AQE splits a large one into ~64 MB files), not one
    -- per task: later runs and the tests read the current partitions in far fewer files.
    select /*+ rebalance(is_current, history_partition) */ *
    from (
        select * from replayed
        {% if plan.incremental %}
            union all
            select * from kept_versions
        {% endif %}
    ) as rewritten
{% endif %}
