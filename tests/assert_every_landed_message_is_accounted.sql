-- Conservation: every landed message produced at least one record (row change, DDL,
-- heartbeat, transaction marker or quarantine), and the ledger cdc_load_batches counts each
-- batch and format once, with counts that add up (each landed message under one kind: a record
-- of another kind, or records run together under a null message id, break the sum). Returns
-- the messages that vanished (`problem` 'no record') and the ledger rows that are wrong
-- (message_id null). One test, one scan of each, for one invariant.
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
),

vanished_messages as (
    select
        landed.message_id,
        landed.source_format,
        landed.load_batch_id,
        'no record' as problem
    from landed
    left anti join records
        on landed.message_id = records.message_id
),

ledger_problems as (
    select
        cast(null as string) as message_id,
        source_format,
        load_batch_id,
        case
            when count(*) > 1 then 'ledger row repeated'
            else 'ledger counts do not add up'
        end as problem
    from {{ ref('cdc_load_batches') }}
    where {{ in_run }}
    group by load_batch_id, source_format
    having
        count(*) > 1
        or bool_or(
            messages_landed != row_change_messages + ddl_messages + heartbeat_messages
            + transaction_messages + quarantined_messages
        )
)

select * from vanished_messages
union all
select * from ledger_problems
