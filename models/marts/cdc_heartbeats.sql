{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['load_batch_id'],
        cdc_record_kinds=['heartbeat'],
    )
}}
{#- Heartbeats, deduplicated: how far each stream has got even when no rows change. -#}
{%- set watermark = cdc_batch_watermark() if is_incremental() else -1 -%}
-- depends_on: {{ ref('stg_cdc_previous_run__load_batches') }}
with new_heartbeats as (
    select
        message_id,
        source_format,
        coalesce(table_id, source_format) as source_id,
        commit_ts as heartbeat_ts,
        record_fingerprint,
        load_batch_id,
        row_number() over (partition by record_fingerprint order by load_batch_id, message_id) as copy_number
    from {{ ref('int_cdc_records') }}
    where
        record_kind = 'heartbeat'
        and {{ cdc_new_batches(watermark) }}
),

final as (
    select
        message_id,
        source_format,
        source_id,
        heartbeat_ts,
        record_fingerprint,
        load_batch_id
    from new_heartbeats
    where copy_number = 1
    {% if is_incremental() %}
        and record_fingerprint not in (
            select record_fingerprint from {{ this }} where not {{ cdc_new_batches(watermark) }}
        )
    {% endif %}
)

select * from final
