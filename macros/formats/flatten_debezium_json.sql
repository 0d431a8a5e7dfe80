{#
    Debezium JSON (plain, with or without the Kafka Connect schema/payload wrapper, and
    Huawei CDL message_version 2.0) -> canonical records, one per message.
    Ordering: the connector's own position (source.connector says which: PostgreSQL lsn,
    MySQL binlog file number/pos/row, Oracle scn, SQL Server commit_lsn/change_lsn/
    event_serial_no), then the source commit time, then the op (r < c < u < d = t).
    Row images are typed with the schema's Kafka Connect logical types when present.
    PostgreSQL's unavailable-value placeholder is dropped from the images and the after
    image marked partial, so the previous value is kept. A change event needs source.db,
    source.table and a time; a delete with before null (PostgreSQL REPLICA IDENTITY NOTHING)
    names no row and is quarantined; so is a CDL 2.0 `unique` value that is neither the row's
    in after nor in before.
#}
{% macro flatten_debezium_json(relation) %}
    {{ cdc_check_relation('flatten_debezium_json', relation, "the landing relation, e.g. source('cdc_landing', 'raw_cdc_messages')") }}
    {{ return(adapter.dispatch('flatten_debezium_json', 'cdc')(relation)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__flatten_debezium_json(relation) %}
    {{ cdc_unsupported_adapter('flatten_debezium_json') }}
{% endmacro %}

{% macro spark__flatten_debezium_json(relation) %}
{#- op facts (var cdc_formats, debezium_json.ops): op ranks, the delete, the names of messages without an op -#}
{%- set ops = cdc_format_ops('debezium_json', ['op_ranks', 'delete', 'tombstone', 'heartbeat', 'schema_change']) -%}
{%- set placeholder = '__debezium_unavailable_value' -%}
{#- the same text as base64, as binary (bytea) columns carry it -#}
{%- set placeholder_base64 = 'X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==' -%}
{%- set schema_fields = "array<struct<field: string, name: string, type: string, fields: array<struct<field: string, name: string, type: string, parameters: map<string, string>>>>>" -%}
with landed as (
    {{ cdc_landed_messages(relation, 'debezium_json') }}
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
        message is not null and (is_variant_null(message) or is_variant_null(payload)) as is_tombstone,
        try_variant_get(payload, '$.op', 'string') as op_code,
        try_variant_get(payload, '$.status', 'string') as transaction_status,
        try_variant_get(payload, '$.message_type', 'string') as message_type,
        try_variant_get(payload, '$.ddl', 'string') as schema_change_ddl,
        try_variant_get(payload, '$.source') as source_block,
        lower(try_variant_get(payload, '$.source.connector', 'string')) as connector,
        try_variant_get(payload, '$.before') as raw_before,
        try_variant_get(payload, '$.after') as raw_after,
        coalesce(
            nullif(try_variant_get(payload, '$.source.ts_ms', 'bigint'), 0),
            try_variant_get(payload, '$.ts_ms', 'bigint')
        ) as event_time_ms,
        -- names are JSON strings (cdc_json_string)
        {{ cdc_json_string('payload', '$.source.db') }} as source_db,
        {{ cdc_json_string('payload', '$.source.table') }} as source_table,
        try_variant_get(payload, '$.source.schema', 'string') as source_schema,
        try_variant_get(payload, '$.unique') as unique_block,
        -- CDL 2.0 declares the key in `unique`; key order is the text's (variant objects sort keys)
        json_object_keys(coalesce(
            get_json_object(message_text, '$.payload.unique'), get_json_object(message_text, '$.unique')
        )) as unique_columns,
        try_variant_get(payload, '$.source.lsn', 'string') as source_lsn,
        try_variant_get(payload, '$.source.scn', 'string') as source_scn,
        regexp_extract(try_variant_get(payload, '$.source.file', 'string'), '([0-9]+)$', 1) as binlog_file_number,
        try_variant_get(payload, '$.source.pos', 'string') as binlog_pos,
        try_variant_get(payload, '$.source.row', 'string') as binlog_row,
        upper(replace(try_variant_get(payload, '$.source.commit_lsn', 'string'), ':', '')) as commit_lsn,
        upper(replace(try_variant_get(payload, '$.source.change_lsn', 'string'), ':', '')) as change_lsn,
        try_variant_get(payload, '$.source.event_serial_no', 'string') as event_serial_no
    from envelope
),

classified as (
    select
        fields.*,
        case
            when is_tombstone then {{ cdc_string_literal(ops['tombstone']) }}
            when message_type is not null and message_type != '0' then {{ cdc_string_literal(ops['heartbeat']) }}
            when op_code is not null then op_code
            when transaction_status is not null then transaction_status
            when schema_change_ddl is not null then {{ cdc_string_literal(ops['schema_change']) }}
            when source_block is null and try_variant_get(payload, '$.ts_ms') is not null then {{ cdc_string_literal(ops['heartbeat']) }}
        end as vendor_op,
        -- column -> its declared Kafka Connect type (a Decimal with its scale and precision)
        {{ cdc_kafka_connect_column_types("coalesce(
            filter(schema_fields, schema_field -> schema_field.field = 'after')[0].fields,
            filter(schema_fields, schema_field -> schema_field.field = 'before')[0].fields
        )", 'debezium_json') }} as column_types,
        case
            when connector = 'postgresql' then array({{ cdc_sortable_number('source_lsn', 20) }})
            when connector = 'mysql' then array(
                {{ cdc_sortable_number("nullif(binlog_file_number, '')", 20) }},
                {{ cdc_sortable_number('binlog_pos', 20) }},
                {{ cdc_sortable_number('binlog_row', 10) }}
            )
            when connector = 'oracle' then array({{ cdc_sortable_number('source_scn', 38) }})
            when connector = 'sqlserver' then array(
                lpad(commit_lsn, 24, '0'), lpad(change_lsn, 24, '0'), {{ cdc_sortable_number('event_serial_no', 20) }}
            )
            else cast(array() as array<string>)
        end as position_parts,
        -- CDL 2.0 key columns whose `unique` value is neither the row's value in after nor in before
        {{ cdc_disagreeing_key_columns('unique_block', 'unique_columns', ['raw_after', 'raw_before']) }}
            as disagreeing_key_columns
    from fields
),

cleaned as (
    -- the unavailable-value placeholder (text, or base64 for binary columns) means "unchanged":
    -- drop those columns so the previous version's values show through
    select
        classified.*,
        case when {{ cdc_is_object('raw_after') }} then
            to_variant_object(map_filter(
                cast(raw_after as map<string, variant>),
                (column_name, column_value) -> coalesce(
                    try_variant_get(column_value, '$', 'string')
                    not in ('{{ placeholder }}', '{{ placeholder_base64 }}'),
                    true
                )
            ))
        else raw_after end as after_columns,
        case when {{ cdc_is_object('raw_before') }} then
            to_variant_object(map_filter(
                cast(raw_before as map<string, variant>),
                (column_name, column_value) -> coalesce(
                    try_variant_get(column_value, '$', 'string')
                    not in ('{{ placeholder }}', '{{ placeholder_base64 }}'),
                    true
                )
            ))
        else raw_before end as before_columns,
        {{ cdc_is_object('raw_after') }}
        and exists(
            map_values(cast(raw_after as map<string, variant>)),
            column_value -> coalesce(
                try_variant_get(column_value, '$', 'string') in ('{{ placeholder }}', '{{ placeholder_base64 }}'),
                false
            )
        ) as has_unavailable_values,
        concat_ws(
            '.',
            -- a position part that is missing sorts first (all zeros), so ts_ms decides
            transform(position_parts, part -> coalesce(part, '0')),
            {{ cdc_sortable_number('cast(event_time_ms as string)', 20) }},
            {{ cdc_op_rank('vendor_op', ops['op_ranks']) }}
        ) as position_key
    from classified
),

final as (
    select
        message_id,
        message_text,
        load_batch_id,
        source_format,
        0 as record_index,
        vendor_op,
        -- db and table both name it (the schema too where the source has one)
        case
            when source_db is not null and source_table is not null
                then concat_ws('.', source_db, source_schema, source_table)
        end as table_id,
        case when size(unique_columns) > 0 then unique_columns end as declared_key_columns,
        {{ cdc_typed_image("if(is_variant_null(before_columns), null, before_columns)", 'column_types', 'debezium_json') }}
            as before_image,
        {{ cdc_typed_image("if(is_variant_null(after_columns), null, after_columns)", 'column_types', 'debezium_json') }}
            as after_image,
        coalesce(has_unavailable_values, false) as after_image_is_partial,
        column_types,
        case when event_time_ms is not null then position_key end as sequence_key,
        timestamp_millis(event_time_ms) as commit_ts,
        schema_change_ddl as ddl_text,
        case
            when loader_error is not null then loader_error
            when message is null then {{ cdc_unparsed_reason() }}
            when is_tombstone then null
            when not {{ cdc_is_object('message') }} then 'message is not a JSON object'
            when not {{ cdc_is_object('payload') }} then 'payload is not a JSON object'
            when {{ cdc_is_not_object('raw_before') }} then 'before is not a JSON object'
            when {{ cdc_is_not_object('raw_after') }} then 'after is not a JSON object'
            when {{ cdc_is_not_object('unique_block') }} then 'unique is not a JSON object'
            when size(disagreeing_key_columns) > 0
                then concat('unique disagrees with the row image on ', to_json(disagreeing_key_columns))
            -- a change event (an op, not a heartbeat) names its table and time in source
            when vendor_op = op_code and {{ cdc_is_not_object('source_block') }} then 'source is not a JSON object'
            when vendor_op = op_code and source_block is not null and source_table is null
                then 'source.table is missing or not a string'
            when vendor_op = op_code and source_block is not null and source_db is null
                then 'source.db is missing or not a string'
            when vendor_op = op_code and event_time_ms is null
                then 'no commit time: neither source.ts_ms nor ts_ms is a number of milliseconds'
            -- PostgreSQL with REPLICA IDENTITY NOTHING logs no old row: nothing says which row went
            when op_code = {{ cdc_string_literal(ops['delete']) }} and (raw_before is null or is_variant_null(raw_before))
                then 'before is null on a delete, so the deleted key is unknown (PostgreSQL REPLICA IDENTITY NOTHING logs no old row)'
            when
                (connector = 'postgresql' and source_lsn is not null and position_parts[0] is null)
                or (connector = 'oracle' and source_scn is not null and position_parts[0] is null)
                or (connector = 'mysql' and binlog_pos is not null and position_parts[1] is null)
                or (connector = 'mysql' and binlog_row is not null and position_parts[2] is null)
                then 'source position (lsn, scn, pos or row) is not a whole number'
        end as format_error
    from cleaned
)

select * from final
{% endmacro %}
