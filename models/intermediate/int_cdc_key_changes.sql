{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}
{#
    Updates that changed the key and carry a partial after image (formats with
    `partial_after_images` in var cdc_formats): the new key's row is the old key's row at that
    position overlaid with the image, so the new key's history depends on the old key's.
    int_cdc_touched_keys touches both keys of such a change and cdc_history carries the row over.
    A small table, rewritten whole from every batch int_cdc_records holds (insert overwrite of
    an unpartitioned table) when the new batches hold such a change, and left as it is, with
    nothing sent, when they hold none (cdc_models_writing_nothing).
#}
{%- if execute and is_incremental() -%}
    {%- set watermark = cdc_batch_watermark() -%}
    {%- if watermark >= 0 and cdc_new_records_summary(watermark).partial_key_changes == 0 -%}
        {%- do cdc_models_writing_nothing().append(model.unique_id) -%}
    {%- endif -%}
{%- endif -%}
with key_change_records as (
    -- int_cdc_records splits each such update into a delete of the old key and an insert of the
    -- new one, from one record
    select
        message_id,
        record_index,
        table_id,
        sequence_key,
        op,
        key_json
    from {{ ref('int_cdc_records') }}
    where
        is_key_change
        and after_image_is_partial
        -- false (nothing read) when no format with partial after images has landed
        and {{ 'true' if cdc_partial_image_formats() else 'false' }}
),

key_changes as (
    select
        table_id,
        sequence_key,
        max(if(op = 'delete', key_json, null)) as from_key_json,
        max(if(op = 'insert', key_json, null)) as to_key_json
    from key_change_records
    group by message_id, record_index, table_id, sequence_key
),

-- one per new key and position (copies of a message landed twice are one change)
final as (
    select
        table_id,
        to_key_json,
        sequence_key,
        min(from_key_json) as from_key_json
    from key_changes
    group by table_id, to_key_json, sequence_key
)

select * from final
