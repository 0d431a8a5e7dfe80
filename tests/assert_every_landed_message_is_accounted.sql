-- Conservation: every landed message produced at least one record (row change, DDL,
-- heartbeat, transaction marker or quarantine). Returns the messages that vanished.
-- Checks the batches of the latest run (macros/testing/spark__get_where_subquery.sql), once it is recorded
-- in cdc_load_batches.
{%- set in_run = cdc_run_batches_condition() %}
with landed as (
    select
        message_id,
        source_format,
        load_batch_id
    from {{ source('cdc_landing', 'raw_cdc_messages') }}
    where
        {{ in_run }}
        and load_batch_id <= (
            select coalesce(max(batches.load_batch_id), -1) from {{ ref('cdc_load_batches') }} as batches
        )
),

records as (
    select message_id
    from {{ ref('int_cdc_records') }}
    where {{ in_run }}
)

select
    landed.message_id,
    landed.source_format,
    landed.load_batch_id
from landed
left anti join records
    on landed.message_id = records.message_id
