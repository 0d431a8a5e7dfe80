{{ config(materialized='view') }}
{#
    Offsets of Kafka topics the broker removed before they were landed and a load accepted
    (cdc-load --skip-removed-offsets), one row per run of offsets, from the loader's ledger
    raw_kafka_offsets (the first batch that recorded it). Empty (no row, the same columns) where
    no Kafka load made the ledger.
#}
{%- set ledger = source('cdc_landing', 'raw_kafka_offsets') -%}
{%- set ledger_exists = adapter.get_relation(
    database=ledger.database, schema=ledger.schema, identifier=ledger.identifier
) is not none -%}
{%- if ledger_exists %}
    with removed as (
        select
            source_format,
            kafka_topic,
            kafka_partition,
            log_end_offset,
            load_batch_id,
            recorded_at,
            -- one row per run
            inline(removed_offsets) as (first_offset, last_offset, removed_by)
        from {{ ledger }}
    ),

    -- a run recorded again (a load killed before its batch's commit, then run again) is one row
    final as (
        select
            source_format,
            kafka_topic,
            kafka_partition,
            first_offset,
            last_offset,
            last_offset - first_offset + 1 as offsets_missing,
            removed_by,
            min(log_end_offset) as log_end_offset,
            min(recorded_at) as recorded_at,
            min(load_batch_id) as load_batch_id
        from removed
        group by 1, 2, 3, 4, 5, 6, 7
    )

    select * from final
{%- else %}
    select
        cast(null as string) as source_format,
        cast(null as string) as kafka_topic,
        cast(null as int) as kafka_partition,
        cast(null as bigint) as first_offset,
        cast(null as bigint) as last_offset,
        cast(null as bigint) as offsets_missing,
        cast(null as string) as removed_by,
        cast(null as bigint) as log_end_offset,
        cast(null as timestamp) as recorded_at,
        cast(null as bigint) as load_batch_id
    where false
{%- endif %}
