{{ config(severity='warn') }}
-- Kafka records the broker removed before they were landed, accepted with cdc-load
-- --skip-removed-offsets (model cdc_kafka_gaps): one row per gap and key of cdc_history that may
-- lack versions. The log cleaner removes a record only when a later record has its key, below
-- the partition's end when the batch read it (log_end_offset): the keys of the changes landed
-- from those offsets. Retention removes the oldest records, whatever their key: one row per gap,
-- without a key. A key whose delete event and tombstone were both removed leaves no trace.
-- depends_on: {{ ref('cdc_events') }}
-- depends_on: {{ source('cdc_landing', 'raw_cdc_messages') }}
{%- set gaps = ref('cdc_kafka_gaps') %}
{#- gaps are read from the Kafka loads' ledger: without it (no Kafka load) there is none to look for -#}
{%- set ledger = source('cdc_landing', 'raw_kafka_offsets') %}
{%- set any_gap = execute
    and adapter.get_relation(database=ledger.database, schema=ledger.schema, identifier=ledger.identifier) is not none
    and adapter.get_relation(database=gaps.database, schema=gaps.schema, identifier=gaps.identifier) is not none
    and run_query('select 1 from ' ~ gaps ~ ' limit 1').rows | length > 0 %}
{%- if execute and not any_gap %}
    {#- nothing to check: the test materialization sends no query -#}
    {%- do cdc_empty_test_scopes().append(model.unique_id) %}
{%- endif %}
{%- if any_gap %}
    select distinct
        gaps.source_format,
        gaps.kafka_topic,
        gaps.kafka_partition,
        gaps.first_offset,
        gaps.last_offset,
        gaps.removed_by,
        events.table_id,
        events.key_json
    from {{ gaps }} as gaps
    left join {{ source('cdc_landing', 'raw_cdc_messages') }} as landing
        on
            gaps.removed_by = 'compaction'
            and gaps.source_format = landing.source_format
            and gaps.kafka_topic = landing.kafka_topic
            and gaps.kafka_partition = landing.kafka_partition
            and gaps.last_offset < landing.kafka_offset
            and gaps.log_end_offset > landing.kafka_offset
    left join {{ ref('cdc_events') }} as events
        on landing.message_id = events.message_id
    -- a compacted run's keys (a run of transaction markers has none); a retention run, keyless
    where events.key_json is not null or gaps.removed_by = 'retention'
{%- else %}
    -- no gap recorded: nothing to read
    select
        cast(null as string) as table_id,
        cast(null as string) as key_json
    where false
{%- endif %}
