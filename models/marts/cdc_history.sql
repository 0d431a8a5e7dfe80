{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_bucket'],
    )
}}
-- depends_on: {{ ref('int_cdc_touched_buckets') }}
{#
    SCD type 2: one row per version of a source row. The changes of a key are ordered
    by their sequence (never by arrival); each insert, update or snapshot opens a
    version, each delete or truncate opens a deleted version. A delete that ends
    nothing (the key is already deleted) is dropped, so versions alternate as the
    source row did. An incremental run rebuilds only the key buckets its batches touch.
#}
with changes as (
    select
        event_id,
        source_format,
        table_id,
        key_json,
        op,
        before_image,
        after_image,
        after_image_is_partial,
        sequence_key,
        commit_ts,
        key_bucket
    from {{ ref('cdc_events') }}
    where key_bucket >= 0
    {% if is_incremental() %}
        and key_bucket in (select key_bucket from {{ ref('int_cdc_touched_buckets') }})
    {% endif %}
),

truncates as (
    select
        event_id,
        source_format,
        table_id,
        sequence_key,
        commit_ts
    from {{ ref('cdc_events') }}
    where key_bucket = -1
),

table_keys as (
    select distinct
        table_id,
        key_json,
        key_bucket
    from changes
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
        table_keys.key_bucket
    from table_keys
    inner join truncates
        on table_keys.table_id = truncates.table_id
),

all_changes as (
    select * from changes
    union all
    select * from truncate_changes
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
    where not (is_deleted and coalesce(previous_is_deleted, op = 'truncate'))
),

-- A partial after image (only the changed columns) is overlaid on the row as it was:
-- each run of partial updates is folded onto the full image (or delete) that starts it.
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
                collect_list(cast(coalesce(segmented.after_image, segmented.before_image) as map <string, variant>))
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
        max(commit_ts) over (
            partition by table_id, key_json order by sequence_key, op, event_id
            rows between unbounded preceding and current row
        ) as valid_from,
        sequence_key as valid_from_sequence,
        lead(sequence_key) over key_order as valid_to_sequence,
        commit_ts,
        event_id,
        source_format,
        key_bucket,
        row_number() over key_order as version_number
    from resolved
    window key_order as (partition by table_id, key_json order by sequence_key, op, event_id)
),

final as (
    select
        table_id,
        key_json,
        version_number,
        valid_from,
        lead(valid_from) over (partition by table_id, key_json order by version_number) as valid_to,
        valid_to_sequence is null as is_current,
        is_deleted,
        op,
        row_image,
        valid_from_sequence,
        valid_to_sequence,
        commit_ts,
        event_id,
        source_format,
        key_bucket
    from versioned
)

select * from final
