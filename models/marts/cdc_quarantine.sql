{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['load_batch_id'],
        cdc_record_kinds=['quarantine'],
    )
}}
{#- Every record that could not be understood, with the reason and the message as landed. -#}
{%- set watermark = cdc_batch_watermark() if is_incremental() else -1 -%}
-- depends_on: {{ ref('stg_cdc_previous_run__load_batches') }}
with quarantined as (
    select
        message_id,
        source_format,
        record_index,
        vendor_op,
        table_id,
        quarantine_reason,
        load_batch_id
    from {{ ref('int_cdc_records') }}
    where
        record_kind = 'quarantine'
        and {{ cdc_new_batches(watermark) }}
),

-- the landed text of the quarantined messages only: the batches that hold one are a filter on
-- the landing table's partitions, pruned while the query runs (no quarantined record: no batch
-- read; at 2M clean messages the text of every message was 3.4 s of a full build)
landed as (
    select
        message_id,
        message_text,
        source_file,
        message_index
    from {{ source('cdc_landing', 'raw_cdc_messages') }}
    where
        {{ cdc_new_batches(watermark) }}
        and load_batch_id in (select quarantined.load_batch_id from quarantined)
),

final as (
    select
        quarantined.message_id,
        quarantined.source_format,
        quarantined.record_index,
        quarantined.vendor_op,
        quarantined.table_id,
        quarantined.quarantine_reason,
        landed.message_text,
        landed.source_file,
        landed.message_index,
        quarantined.load_batch_id
    from quarantined
    left join landed
        on quarantined.message_id = landed.message_id
)

select * from final
