{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_bucket'],
    )
}}
-- depends_on: {{ ref('int_cdc_touched_buckets') }}
{#
    One row per row-level change, deduplicated. Records of one key at one sequence
    position are one change: DataWorks' UPDATE_BEFOR + UPDATE_AFTER pair, a record
    landed twice. A before image alone at a position means the row left this key
    (a delete, or the old side of a key change). Truncates are table-wide rows with
    no key, kept in partition -1.
#}
with records as (
    select
        record_fingerprint,
        message_id,
        load_batch_id,
        source_format,
        record_index,
        op,
        table_id,
        key_json,
        before_image,
        after_image,
        after_image_is_partial,
        column_types,
        sequence_key,
        commit_ts,
        is_key_change,
        record_partition
    from {{ ref('int_cdc_records') }}
    where
        record_kind in ('row_change', 'ddl')
        and op is not null
    {% if is_incremental() %}
            and (
                record_partition in (select key_bucket from {{ ref('int_cdc_touched_buckets') }})
                or record_partition < -({{ cdc_batch_watermark() }})
            )
        {% endif %}
),

-- the same record landed twice (or in two batches) is one record
unique_records as (
    select *
    from (
        select
            records.*,
            row_number()
                over (partition by records.record_fingerprint order by records.load_batch_id, records.message_id)
                as copy_number
        from records
    ) as numbered_records
    where copy_number = 1
),

keyed_changes as (
    select
        table_id,
        key_json,
        sequence_key,
        max(commit_ts) as commit_ts,
        max(record_partition) as key_bucket,
        max_by(after_image, if(after_image is not null, record_fingerprint, null)) as after_image,
        max_by(before_image, if(before_image is not null, record_fingerprint, null)) as before_image,
        max_by(op, if(after_image is not null, record_fingerprint, null)) as after_op,
        max_by(after_image_is_partial, if(after_image is not null, record_fingerprint, null)) as after_image_is_partial,
        max_by(column_types, record_fingerprint) as column_types,
        max_by(source_format, record_fingerprint) as source_format,
        max_by(message_id, if(after_image is not null, record_fingerprint, null)) as after_message_id,
        max_by(message_id, record_fingerprint) as any_message_id,
        max(load_batch_id) as load_batch_id,
        bool_or(is_key_change) as is_key_change
    from unique_records
    where key_json is not null
    group by table_id, key_json, sequence_key
),

row_changes as (
    select
        table_id,
        key_json,
        sequence_key,
        -- an after image decides the change; a before image alone means the row left the key
        case when after_image is not null then after_op else 'delete' end as op,
        before_image,
        after_image,
        coalesce(after_image_is_partial, false) as after_image_is_partial,
        column_types,
        commit_ts,
        source_format,
        coalesce(after_message_id, any_message_id) as message_id,
        load_batch_id,
        is_key_change,
        key_bucket
    from keyed_changes
),

new_truncates as (
    select
        table_id,
        cast(null as string) as key_json,
        sequence_key,
        'truncate' as op,
        cast(null as variant) as before_image,
        cast(null as variant) as after_image,
        false as after_image_is_partial,
        cast(null as map <string, string>) as column_types,
        commit_ts,
        source_format,
        message_id,
        load_batch_id,
        false as is_key_change,
        -1 as key_bucket
    from unique_records
    where op = 'truncate'
),

-- partition -1 holds every truncate; it is rewritten from itself plus the new ones
truncates as (
    select *
    from (
        select
            all_truncates.*,
            row_number() over (
                partition by all_truncates.table_id, all_truncates.sequence_key
                order by all_truncates.load_batch_id, all_truncates.message_id
            ) as copy_number
        from (
            select * from new_truncates
            {% if is_incremental() %}
                union all
                select
                    table_id, key_json, sequence_key, op, before_image, after_image,
                    after_image_is_partial, column_types, commit_ts, source_format,
                    message_id, load_batch_id, is_key_change, key_bucket
                from {{ this }}
                where key_bucket = -1
            {% endif %}
        ) as all_truncates
    )
    where copy_number = 1
),

unioned as (
    select * from row_changes
    union all
    select * except (copy_number) from truncates
),

final as (
    select
        sha2(concat_ws('\u0001', table_id, key_json, sequence_key, op), 256) as event_id,
        source_format,
        table_id,
        key_json,
        op,
        before_image,
        after_image,
        after_image_is_partial,
        column_types,
        sequence_key,
        commit_ts,
        is_key_change,
        message_id,
        load_batch_id,
        key_bucket
    from unioned
)

select * from final
