{{ config(materialized='table') }}
{#
    The key buckets that the batches of this run touch: buckets of their row changes,
    and every bucket holding a key of a table they truncate. Incremental marts rewrite
    exactly these partitions.
#}
{%- set watermark = cdc_batch_watermark() -%}
with new_records as (
    select
        record_kind,
        op,
        table_id,
        record_partition
    from {{ ref('int_cdc_records') }}
    where load_batch_id > {{ watermark }}
),

row_change_buckets as (
    select distinct record_partition as key_bucket
    from new_records
    where record_partition >= 0
),

truncated_tables as (
    select distinct table_id
    from new_records
    where op = 'truncate'
),

truncated_buckets as (
    select distinct records.record_partition as key_bucket
    from {{ ref('int_cdc_records') }} as records
    inner join truncated_tables
        on records.table_id = truncated_tables.table_id
    where records.record_partition >= 0
),

final as (
    select key_bucket from row_change_buckets
    union
    select key_bucket from truncated_buckets
)

select * from final
