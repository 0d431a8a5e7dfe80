{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['table_id', 'key_json', 'version_number'],
        cdc_merge='scd2_versions',
        partition_by=['is_current', 'history_partition'],
        tblproperties={'delta.enableDeletionVectors': 'true', 'cdc.key_buckets': var('cdc_key_buckets') | string},
        pre_hook='{{ cdc_history_prepare() }}',
        post_hook='drop view if exists {{ cdc_history_touched_versions_view() }}',
    )
}}
{#- the post-hook lets the cached versions go; cdc.key_buckets records the var the current
    versions are stored by (cdc_history_check_key_buckets) -#}
-- depends_on: {{ ref('int_cdc_key_changes') }}
-- depends_on: {{ ref('stg_cdc_previous_run__load_batches') }}
{#
    SCD type 2: one row per version of a source row. The versioning rules are macro
    cdc_scd2_versions (changes ordered by their sequence, never by arrival; each insert,
    update or snapshot opens a version, each delete or truncate a deleted version; a delete
    that ends nothing is dropped; partial images, key changes), proven rule by rule by the
    integration_tests/ project. This model feeds it the changes to replay and stores what
    it returns.

    Stored in two kinds of partitions: current versions by key bucket, closed versions by
    the day of the run that closed them (cdc_history_closed_partition). An incremental run replays each
    touched key from its replay position (cdc_touched_keys_query), starting from the last
    version it had before that position, and MERGEs the result (cdc_history_merge_sql): the
    versions it opens, closes or changes are written, the stored versions it replays away
    deleted, and no other row is rewritten: deletion vectors (on this table only, see the
    README) mark the rows it replaces. It reads the current versions of the touched
    buckets and, for a late change (older than a key's current version), the closed
    partitions holding the versions it changes (cdc_history_plan).
#}
{%- set plan = cdc_history_plan() -%}
{%- set closed_partition = cdc_history_closed_partition(plan.run_batch if plan.incremental
    else '(select max(load_batch_id) from ' ~ ref('int_cdc_records') ~ ')') -%}
{%- set change_columns = [
    'event_id', 'source_format', 'table_id', 'key_json', 'op', 'before_image', 'after_image',
    'after_image_is_partial', 'sequence_key', 'commit_ts', 'key_bucket', 'is_key_change',
] -%}
{#- a partial after image whose message declares its table's columns (column_types: Debezium's
    schema) is restricted to them once overlaid: a column dropped upstream is not carried over -#}
{%- set partial_image_columns = 'if(after_image_is_partial and cardinality(column_types) > 0, '
    ~ 'map_keys(column_types), cast(null as array<string>)) as partial_image_columns' -%}
{%- set history_columns = [
    'table_id', 'key_json', 'version_number', 'valid_from', 'valid_to', 'is_deleted', 'op',
    'row_image', 'valid_from_sequence', 'valid_to_sequence', 'commit_ts', 'event_id',
    'source_format', 'key_bucket', 'is_current', 'history_partition',
] -%}
{#- the touched keys' stored versions, cached while a run runs (cdc_history_cache_touched_versions):
    first their current versions, in which the late keys are found (with the cdc_events partitions
    to read: cdc_history_plan_reads); then, only when a change is late, with the closed versions it
    recomputes -#}
{%- set touched_versions = none -%}
{%- if plan.incremental and plan.current_buckets -%}
    {%- set touched_versions_query = cdc_history_touched_versions_query(plan.current_buckets, [], history_columns) -%}
    {%- set touched_versions = cdc_history_cache_touched_versions(touched_versions_query) -%}
    {%- do cdc_history_plan_reads(plan, touched_versions or '(' ~ touched_versions_query ~ ')') -%}
    {%- if plan.closed_partitions -%}
        {%- set touched_versions_query = cdc_history_touched_versions_query(
            plan.current_buckets, plan.closed_partitions, history_columns) -%}
        {%- set touched_versions = cdc_history_cache_touched_versions(touched_versions_query, replace=true) -%}
    {%- endif -%}
{%- endif -%}
{%- if execute and is_incremental() %}{% do cdc_history_note_merge_scope(plan) %}{% endif -%}
{% if plan.incremental and not plan.current_buckets %}
    -- nothing new: nothing is merged
    select
        {{ history_columns | join(', ') }},
        'upsert' as merge_action
    from {{ this }}
    where false
{% else %}
    with
    {% if plan.incremental %}
        -- the touched keys with their stored versions (none for a new key: its version columns
        -- are null), each with the last version the key had before its replay position: the
        -- replay starts from that one
        touched_versions as (
            {{ touched_versions_query if touched_versions is none else 'select * from ' ~ touched_versions }}
        ),

        touched_keys as (
            select
                table_id,
                key_json,
                key_bucket,
                replay_from_sequence
            from touched_versions
            where is_key_row
        ),

        -- the prior version and every later one are recomputed
        recomputed_versions as (
            select {{ history_columns | join(', ') }}
            from touched_versions
            where version_number >= coalesce(prior_version_number, 0)
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
                version_number - 1 as version_offset,
                cast(null as array<string>) as partial_image_columns
            from touched_versions
            where version_number = prior_version_number
        ),

        key_changes as (
            select
                {% for column in change_columns %}events.{{ column }},{% endfor %}
                events.commit_ts as valid_from_floor,
                false as is_prior,
                cast(null as int) as version_offset,
                {{ partial_image_columns }}
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
                cast(null as int) as version_offset,
                {{ partial_image_columns }}
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

    {# the SCD2 rules: CTEs ending in `replayed`, the versions of the replayed keys #}
    {{ cdc_scd2_versions(
        'key_changes', 'truncates', 'table_keys',
        prior_changes='prior_changes' if plan.incremental else none,
        replay_keys='touched_keys' if plan.incremental else none,
        partial_key_changes=ref('int_cdc_key_changes'),
        key_change_rounds=plan.key_change_rounds,
        partial_images=plan.partial_images,
        closed_partition=closed_partition,
        name='replayed',
    ) }}

    {% if plan.incremental %}
        -- what the MERGE does with each row (cdc_history_merge_sql): the versions replayed, and
        -- the stored ones the replay no longer has (deleted). Both sides in one pass, so that the
        -- replay is planned and run once (an anti join with it read `replayed` twice: the suite's
        -- key-change rounds merged in 53 s against 32 s)
        select
            {{ history_columns | join(', ') }},
            merge_action
        from (
            select
                *,
                max(merge_action = 'upsert') over (
                    partition by table_id, key_json, version_number
                ) as is_replayed
            from (
                select
                    replayed.*,
                    'upsert' as merge_action
                from replayed
                union all
                select
                    recomputed_versions.*,
                    'delete' as merge_action
                from recomputed_versions
            ) as replayed_and_stored
        ) as compared
        where merge_action = 'upsert' or not is_replayed
    {% elif is_incremental() %}
        -- the table exists but no build completed (the pre-hook emptied it): the MERGE fills it
        select
            replayed.*,
            'upsert' as merge_action
        from replayed
    {% else %}
        -- Each partition written as one file (AQE splits a large one into ~64 MB files), not one
        -- per task: later runs and the tests read the current partitions in far fewer files.
        select /*+ rebalance(is_current, history_partition) */ *
        from replayed
    {% endif %}
{% endif %}
