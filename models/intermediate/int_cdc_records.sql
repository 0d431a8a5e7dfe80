{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['load_batch_id'],
        on_schema_change='fail',
    )
}}
-- depends_on: {{ ref('stg_cdc_previous_run__load_batches') }}
{#
    The parsed records of every landed batch, stored so that JSON is parsed once, one
    partition per landing batch (as raw_cdc_messages). A run parses only the batches
    above the watermark and writes their partitions; earlier batches are not read.
    Partitions a failed run left behind for the same batches are replaced, so
    re-running is exact. A run whose records no longer have the stored columns' types (a
    new version of the project changed one) stops with dbt's schema-change error, which
    asks for --full-refresh: an insert would cast them silently (binary into string).
#}
select
    message_id,
    source_format,
    record_index,
    record_kind,
    vendor_op,
    op,
    table_id,
    key_json,
    before_image,
    after_image,
    after_image_is_partial,
    column_types,
    sequence_key,
    commit_ts,
    ddl_text,
    is_key_change,
    quarantine_reason,
    record_fingerprint,
    key_bucket,
    load_batch_id
from {{ ref('int_cdc_records_unioned') }}
where {{ cdc_new_batches(cdc_batch_watermark() if is_incremental() else -1) }}
