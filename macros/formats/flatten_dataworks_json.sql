{#
    DataWorks / DataHub BLOB and Kafka JSON envelope -> canonical CDC records
    (one record per message). Ordering: payload.sequenceId, compared as a number.
    Row images are typed with schema.dataColumn: DATE (13-digit ms) becomes a
    timestamp, BYTES (base64) becomes binary, the rest keep their JSON type.
#}
{% macro flatten_dataworks_json(relation) %}
    {{ cdc_check_relation('flatten_dataworks_json', relation, "the landing relation, e.g. source('cdc_landing', 'raw_cdc_messages')") }}
    {{ return(adapter.dispatch('flatten_dataworks_json', 'cdc')(relation)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__flatten_dataworks_json(relation) %}
    {{ cdc_unsupported_adapter('flatten_dataworks_json') }}
{% endmacro %}

{% macro spark__flatten_dataworks_json(relation) %}
{#- the envelope fields read below; images and values whose JSON type is checked stay variant -#}
{%- set envelope_schema -%}
    struct<
        schema: struct<
            source: struct<dbName: string, schemaName: string, tableName: string>,
            primaryKey: variant,
            dataColumn: array<struct<name: string, type: string>>
        >,
        payload: struct<
            op: variant,
            sequenceId: variant,
            timestamp: struct<eventTime: variant>,
            ddl: struct<text: variant>,
            before: variant,
            after: variant
        >
    >
{%- endset %}
with landed as (
    {{ cdc_landed_messages(relation, 'dataworks_json', envelope_schema | replace('\n', ' ')) }}
),

fields as (
    select
        landed.*,
        try_variant_get(envelope.payload.op, '$', 'string') as vendor_op,
        try_variant_get(envelope.payload.sequenceId, '$', 'string') as sequence_id,
        try_variant_get(envelope.payload.timestamp.eventTime, '$', 'bigint') as event_time_ms,
        envelope.payload.timestamp.eventTime as event_time_value,
        try_variant_get(envelope.payload.ddl.text, '$', 'string') as ddl_text,
        envelope.payload.before as before_envelope,
        envelope.payload.after as after_envelope,
        try_variant_get(envelope.payload.before, '$.dataColumn') as before_columns,
        try_variant_get(envelope.payload.after, '$.dataColumn') as after_columns,
        envelope.payload.sequenceId as sequence_value,
        envelope.schema.primaryKey as primary_key_value,
        concat_ws(
            '.', envelope.schema.source.dbName, envelope.schema.source.schemaName, envelope.schema.source.tableName
        ) as dotted_table,
        try_variant_get(envelope.schema.primaryKey, '$', 'array<string>') as primary_key,
        map_from_entries(envelope.schema.dataColumn) as column_types
    from landed
),

final as (
    select
        message_id,
        message_text,
        load_batch_id,
        source_format,
        0 as record_index,
        vendor_op,
        nullif(dotted_table, '') as table_id,
        primary_key as declared_key_columns,
        {{ cdc_typed_image('before_columns', 'column_types', 'dataworks_json') }} as before_image,
        {{ cdc_typed_image('after_columns', 'column_types', 'dataworks_json') }} as after_image,
        false as after_image_is_partial,
        column_types,
        {{ cdc_sortable_number('sequence_id') }} as sequence_key,
        timestamp_millis(event_time_ms) as commit_ts,
        ddl_text,
        case
            when loader_error is not null then loader_error
            when envelope is null then {{ cdc_envelope_error() }}
            when {{ cdc_is_not_object('before_envelope') }} then 'payload.before is not a JSON object'
            when {{ cdc_is_not_object('after_envelope') }} then 'payload.after is not a JSON object'
            when {{ cdc_is_not_object('before_columns') }}
                then 'payload.before.dataColumn is not a JSON object'
            when {{ cdc_is_not_object('after_columns') }}
                then 'payload.after.dataColumn is not a JSON object'
            when sequence_value is not null and not is_variant_null(sequence_value)
                and {{ cdc_sortable_number('sequence_id') }} is null
                then 'payload.sequenceId is not a whole number'
            when primary_key_value is not null and not is_variant_null(primary_key_value) and primary_key is null
                then 'schema.primaryKey is not a list of column names'
            when event_time_ms is null and event_time_value is not null and not is_variant_null(event_time_value)
                then 'payload.timestamp.eventTime is not a number of milliseconds'
        end as format_error
    from fields
)

select * from final
{% endmacro %}
