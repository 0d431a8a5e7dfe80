-- Conservation: every landed message produced at least one record (row change, DDL,
-- heartbeat, transaction marker or quarantine). Returns the messages that vanished.
select
    landed.message_id,
    landed.source_format,
    landed.load_batch_id
from {{ source('cdc_landing', 'raw_cdc_messages') }} as landed
left anti join {{ ref('int_cdc_records') }} as records
    on landed.message_id = records.message_id
where landed.load_batch_id <= (
    select coalesce(max(batches.load_batch_id), -1) from {{ ref('cdc_load_batches') }} as batches
)
