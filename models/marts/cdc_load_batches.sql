{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['load_batch_id'],
    )
}}
-- depends_on: {{ ref('cdc_history') }}
-- depends_on: {{ ref('cdc_current') }}
-- depends_on: {{ ref('cdc_ddl_events') }}
-- depends_on: {{ ref('cdc_heartbeats') }}
-- depends_on: {{ ref('cdc_quarantine') }}
{#
    Conservation ledger, one row per landing batch and format: every landed message is
    accounted for as row changes, DDL, heartbeat, transaction marker or quarantine. It
    is built last, so its newest batch is the watermark of the next incremental run.
#}
{%- set watermark = cdc_batch_watermark() if is_incremental() else -1 -%}
with records as (
    select
        load_batch_id,
        source_format,
        message_id,
        record_kind
    from {{ ref('int_cdc_records') }}
    where {{ cdc_new_batches(watermark) }}
),

-- only batches this run parsed: one landed while it ran (Thrift target) waits for the next
landed as (
    select
        load_batch_id,
        source_format,
        count(*) as messages_landed
    from {{ source('cdc_landing', 'raw_cdc_messages') }}
    where
        {{ cdc_new_batches(watermark) }}
        and load_batch_id in (select records.load_batch_id from records)
    group by load_batch_id, source_format
),

-- a message is quarantined if any of its records is; otherwise it has one kind
messages as (
    select
        load_batch_id,
        source_format,
        message_id,
        case when bool_or(record_kind = 'quarantine') then 'quarantine' else max(record_kind) end as message_kind,
        count(*) as records
    from records
    group by load_batch_id, source_format, message_id
),

accounted as (
    select
        load_batch_id,
        source_format,
        count_if(message_kind = 'row_change') as row_change_messages,
        count_if(message_kind = 'ddl') as ddl_messages,
        count_if(message_kind = 'heartbeat') as heartbeat_messages,
        count_if(message_kind = 'transaction') as transaction_messages,
        count_if(message_kind = 'quarantine') as quarantined_messages,
        sum(if(message_kind = 'row_change', records, 0)) as row_change_records
    from messages
    group by load_batch_id, source_format
),

final as (
    select
        landed.source_format,
        landed.messages_landed,
        coalesce(accounted.row_change_messages, 0) as row_change_messages,
        coalesce(accounted.ddl_messages, 0) as ddl_messages,
        coalesce(accounted.heartbeat_messages, 0) as heartbeat_messages,
        coalesce(accounted.transaction_messages, 0) as transaction_messages,
        coalesce(accounted.quarantined_messages, 0) as quarantined_messages,
        coalesce(accounted.row_change_records, 0) as row_change_records,
        current_timestamp() as built_at,
        landed.load_batch_id
    from landed
    left join accounted
        on
            landed.load_batch_id = accounted.load_batch_id
            and landed.source_format = accounted.source_format
)

select * from final
