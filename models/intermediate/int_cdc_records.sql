{%- set record_columns = [
    'message_id', 'load_batch_id', 'source_format', 'record_index', 'record_kind', 'vendor_op',
    'op', 'table_id', 'key_json', 'before_image', 'after_image', 'after_image_is_partial',
    'column_types', 'sequence_key', 'commit_ts', 'ddl_text', 'is_key_change',
    'quarantine_reason', 'record_fingerprint', 'record_partition',
] -%}
{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['record_partition'],
        pre_hook='{{ cdc_cache_new_records() }}',
        post_hook='drop view if exists {{ cdc_new_records_view() }}',
    )
}}
{#
    The parsed records of every landed batch, stored so that JSON is parsed once.
    Row changes are partitioned by key bucket; everything else by its batch (negated).
    A run parses the batches above the watermark and rewrites the partitions they
    touch: what those partitions held from earlier batches, plus the new records.
    Records a failed run left behind for the same batches are replaced, so re-running
    is exact.
#}
{% if is_incremental() %}
    {%- set watermark = cdc_batch_watermark() -%}
    -- the new records, parsed once by the pre-hook (cdc_cache_new_records)
    with new_records as (
        select {{ record_columns | join(', ') }}
        from {{ cdc_new_records_view() }}
    ),

    earlier_records as (
        select {{ record_columns | join(', ') }}
        from {{ this }}
        where load_batch_id <= {{ watermark }}
            and record_partition in (select record_partition from new_records)
    )

    select * from new_records
    union all
    select * from earlier_records
{% else %}
    select {{ record_columns | join(', ') }}
    from {{ ref('int_cdc_records_unioned') }}
{% endif %}
