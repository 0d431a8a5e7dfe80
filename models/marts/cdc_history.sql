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
{%- set closed_partition = plan.run_batch if plan.incremental
    else '(select max(load_batch_id) from ' ~ ref('int_cdc_records') ~ ')' -%}
{%- set change_columns = [
    'event_id', 'source_format', 'table_id', 'key_json', 'op', 'before_image', 'after_image',
    'after_image_is_partial', 'sequence_key', 'commit_ts', 'key_bucket',
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

    flagged as (
        select
            all_changes.*,
            all_changes.op in ('delete', 'truncate') as is_deleted,
            lag(all_changes.op in ('delete', 'truncate')) over key_order as previous_is_deleted
        from all_changes
        window key_order as (partition by table_id, key_json order by sequence_key, op, event_id)
    ),

    -- deletes that end no live version are not versions
    effective as (
        select *
        from flagged
        where is_prior or not (is_deleted and coalesce(previous_is_deleted, op = 'truncate'))
    ),

    -- A partial after image (only the changed columns) is overlaid on the row as it was:
    -- each run of partial updates is folded onto the full image that starts it (onto
    -- nothing after a delete).
    segmented as (
        select
            effective.*,
            sum(if(effective.is_deleted or not effective.after_image_is_partial, 1, 0)) over (
                partition by effective.table_id, effective.key_json
                order by effective.sequence_key, effective.op, effective.event_id
                rows between unbounded preceding and current row
            ) as image_segment
        from effective
    ),

    resolved as (
        select
            segmented.*,
            case
                when segmented.is_deleted then null
                when not segmented.after_image_is_partial then segmented.after_image
                else to_variant_object(aggregate(
                    collect_list(cast(segmented.after_image as map <string, variant>))
                        over (
                            partition by segmented.table_id, segmented.key_json, segmented.image_segment
                            order by segmented.sequence_key, segmented.op, segmented.event_id
                            rows between unbounded preceding and current row
                        ),
                    cast(map() as map <string, variant>),
                    (row_so_far, changed) -> map_zip_with(
                        row_so_far, changed, (column_name, old_value, new_value) -> coalesce(new_value, old_value)
                    )
                ))
            end as live_image
        from segmented
    ),

    versioned as (
        select
            table_id,
            key_json,
            op,
            is_deleted,
            -- a deleted version shows the row as it was when deleted
            case
                when is_deleted then coalesce(before_image, lag(live_image) over key_order)
                else live_image
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
        window key_order as (partition by table_id, key_json order by sequence_key, op, event_id)
    ),

    replayed as (
        select
            table_id,
            key_json,
            version_number,
            valid_from,
            lead(valid_from) over (partition by table_id, key_json order by version_number) as valid_to,
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
