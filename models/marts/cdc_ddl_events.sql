{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['load_batch_id'],
        cdc_record_kinds=['ddl'],
    )
}}
{#- DDL messages, deduplicated: a DDL landed again in a later batch is not logged twice. -#}
{%- set watermark = cdc_batch_watermark() if is_incremental() else -1 -%}
-- depends_on: {{ ref('stg_cdc_previous_run__load_batches') }}
with new_ddl as (
    select
        message_id,
        source_format,
        table_id,
        vendor_op,
        ddl_text,
        sequence_key,
        commit_ts,
        op = 'truncate' as is_truncate,
        record_fingerprint,
        load_batch_id,
        row_number() over (partition by record_fingerprint order by load_batch_id, message_id) as copy_number
    from {{ ref('int_cdc_records') }}
    where
        record_kind = 'ddl'
        and {{ cdc_new_batches(watermark) }}
),

final as (
    select
        message_id,
        source_format,
        table_id,
        vendor_op,
        ddl_text,
        sequence_key,
        commit_ts,
        is_truncate,
        record_fingerprint,
        load_batch_id
    from new_ddl
    where copy_number = 1
    {% if is_incremental() %}
        and record_fingerprint not in (
            select record_fingerprint from {{ this }} where not {{ cdc_new_batches(watermark) }}
        )
    {% endif %}
)

select * from final
