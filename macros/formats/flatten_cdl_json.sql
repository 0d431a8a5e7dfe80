{#
    Huawei MRS CDL JSON (message_version 1.0) -> canonical records, one per message.
    Ordering: transaction.properties `lsn` as a number, then TIMESTAMP (ms), then the op
    (INSERT < UPDATE < DELETE). Table: SEG_OWNER.TABLE_NAME (DATA_STORE names the
    source type, e.g. POSTGRESQL, not a database). Key: the field names of `unique`, in
    message order. A message whose message_type is present and not "0" is a heartbeat
    (every data message carries a HEARTBEAT_IDENTIFIER, so that alone proves nothing).
    Row images are typed with the Kafka Connect schema of `data` / `before`. A DELETE
    without `before` takes `unique` (the primary key) as its before image; a `unique` value
    that is neither the row's in `data` nor in `before` is quarantined, as is a data message
    without SEG_OWNER, TABLE_NAME or TIMESTAMP.
#}
{% macro flatten_cdl_json(relation) %}
    {{ cdc_check_relation('flatten_cdl_json', relation, "the landing relation, e.g. source('cdc_landing', 'raw_cdc_messages')") }}
    {{ return(adapter.dispatch('flatten_cdl_json', 'cdc')(relation)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__flatten_cdl_json(relation) %}
    {{ cdc_unsupported_adapter('flatten_cdl_json') }}
{% endmacro %}

{% macro spark__flatten_cdl_json(relation) %}
{#- op facts (var cdc_formats, cdl_json.ops): op ranks, the delete, the heartbeat's name -#}
{%- set ops = cdc_format_ops('cdl_json', ['op_ranks', 'delete', 'heartbeat']) -%}
{%- set schema_fields = "array<struct<field: string, name: string, type: string, fields: array<struct<field: string, name: string, type: string, parameters: map<string, string>>>>>" -%}
with landed as (
    {{ cdc_landed_messages(relation, 'cdl_json') }}
),

envelope as (
    select
        landed.*,
        -- the Kafka Connect JSON converter wraps the value as {"schema": ..., "payload": ...}
        case
            when try_variant_get(message, '$.payload') is not null then try_variant_get(message, '$.payload')
            else message
        end as payload,
        try_variant_get(message, '$.schema.fields', '{{ schema_fields }}') as schema_fields
    from landed
),

fields as (
    select
        envelope.*,
        try_variant_get(payload, '$.OPERATION', 'string') as operation,
        try_variant_get(payload, '$.message_type', 'string') as message_type,
        try_variant_get(payload, '$.TIMESTAMP', 'bigint') as event_time_ms,
        try_variant_get(payload, '$.before') as raw_before,
        try_variant_get(payload, '$.data') as after_columns,
        try_variant_get(payload, '$.unique') as unique_block,
        -- names are JSON strings (cdc_json_string)
        {{ cdc_json_string('payload', '$.SEG_OWNER') }} as seg_owner,
        {{ cdc_json_string('payload', '$.TABLE_NAME') }} as table_name,
        try_variant_get(payload, '$.transaction.properties') as raw_properties,
        -- key order is the text's (variant objects sort their keys)
        json_object_keys(coalesce(
            get_json_object(message_text, '$.payload.unique'), get_json_object(message_text, '$.unique')
        )) as unique_columns,
        filter(
            try_variant_get(
                payload, '$.transaction.properties', 'array<struct<name: string, value: string>>'
            ),
            property -> property.name = 'lsn'
        )[0].value as lsn,
        {{ cdc_kafka_connect_column_types("coalesce(
            filter(schema_fields, schema_field -> schema_field.field = 'data')[0].fields,
            filter(schema_fields, schema_field -> schema_field.field = 'before')[0].fields
        )", 'cdl_json') }} as column_types
    from envelope
),

images as (
    select
        fields.*,
        -- a DELETE without `before` still names its row in `unique` (the primary key)
        case
            when
                operation = {{ cdc_string_literal(ops['delete']) }}
                and (raw_before is null or is_variant_null(raw_before))
                and {{ cdc_is_object('unique_block') }}
                then unique_block
            else raw_before
        end as before_columns,
        -- key columns whose `unique` value is neither the row's value in `data` nor in `before`
        {{ cdc_disagreeing_key_columns('unique_block', 'unique_columns', ['after_columns', 'raw_before']) }}
            as disagreeing_key_columns
    from fields
),

final as (
    select
        message_id,
        message_text,
        load_batch_id,
        source_format,
        0 as record_index,
        case
            when message_type is not null and message_type != '0' then {{ cdc_string_literal(ops['heartbeat']) }}
            else operation
        end as vendor_op,
        case when seg_owner is not null and table_name is not null then concat(seg_owner, '.', table_name) end
            as table_id,
        case when size(unique_columns) > 0 then unique_columns end as declared_key_columns,
        {{ cdc_typed_image('before_columns', 'column_types', 'cdl_json') }} as before_image,
        {{ cdc_typed_image('after_columns', 'column_types', 'cdl_json') }} as after_image,
        false as after_image_is_partial,
        column_types,
        case when event_time_ms is not null or lsn is not null then concat_ws(
            '.',
            coalesce({{ cdc_sortable_number('lsn', 20) }}, '0'),
            coalesce({{ cdc_sortable_number('cast(event_time_ms as string)', 20) }}, '0'),
            {{ cdc_op_rank('operation', ops['op_ranks']) }}
        ) end as sequence_key,
        timestamp_millis(event_time_ms) as commit_ts,
        cast(null as string) as ddl_text,
        case
            when loader_error is not null then loader_error
            when message is null then {{ cdc_unparsed_reason() }}
            when not {{ cdc_is_object('message') }} then 'message is not a JSON object'
            when not {{ cdc_is_object('payload') }} then 'payload is not a JSON object'
            when {{ cdc_is_not_object('before_columns') }} then 'payload.before is not a JSON object'
            when {{ cdc_is_not_object('after_columns') }} then 'payload.data is not a JSON object'
            when lsn is not null and {{ cdc_sortable_number('lsn', 20) }} is null
                then 'transaction.properties lsn is not a whole number'
            when {{ cdc_is_not_object('unique_block') }} then 'unique is not a JSON object'
            -- a data message (heartbeats excepted) names its table and time
            when coalesce(message_type, '0') = '0' and seg_owner is null then 'SEG_OWNER is missing or not a string'
            when coalesce(message_type, '0') = '0' and table_name is null then 'TABLE_NAME is missing or not a string'
            when coalesce(message_type, '0') = '0' and event_time_ms is null
                then 'TIMESTAMP is missing or not a number of milliseconds'
            when
                raw_properties is not null
                and not is_variant_null(raw_properties)
                and try_variant_get(raw_properties, '$', 'array<struct<name: string, value: string>>') is null
                then 'transaction.properties is not a list of {name, value} entries'
            when size(disagreeing_key_columns) > 0
                then concat('unique disagrees with the row image on ', to_json(disagreeing_key_columns))
        end as format_error
    from images
)

select * from final
{% endmacro %}
