{#
    Google Datastream events (source document 004) -> canonical CDC records, one per
    event. The shared core of `flatten_datastream_json` and `flatten_datastream_avro`:
    both carry the same event model, the Avro one rendered to JSON by the loader.

    What differs between the two renderings, and is normalised here:
    - read_timestamp / source_timestamp: JSON strings without zone in the JSON format
      ("2019-11-07T02:15:39", "2021-12-25 05:42:04.408"), ISO-8601 with offset from the
      Avro timestamp-millis logical type, or bare epoch milliseconds in older Avro schemas
      without the logical type. All become a UTC timestamp.
    - payload values (Avro only): Oracle character columns of older schemas arrive as
      {"value", "length"} records and timestamp-with-time-zone as {"timestamp", "offset"};
      they are unwrapped to the value / timestamp, as Google's own templates do.

    Order (`sequence_key`), key and op rules: see the `order_datastream_json` doc block.
    Nothing from a message becomes SQL text.
#}
{% macro flatten_datastream(relation, source_format) %}
    {{ cdc_check_relation('flatten_datastream', relation, "the landing relation, e.g. source('cdc_landing', 'raw_cdc_messages')") }}
    {%- if source_format not in ('datastream_json', 'datastream_avro') -%}
        {{ cdc_argument_error('flatten_datastream', 'source_format',
            "'datastream_json' or 'datastream_avro' (or call flatten_datastream_json / flatten_datastream_avro)",
            source_format) }}
    {%- endif -%}
    {{ return(adapter.dispatch('flatten_datastream', 'cdc')(relation, source_format)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__flatten_datastream(relation, source_format) %}
    {{ cdc_unsupported_adapter('flatten_datastream') }}
{% endmacro %}

{% macro spark__flatten_datastream(relation, source_format) %}
{#- op facts (var cdc_formats, <format>.ops): the change types whose payload is the removed row,
    and the prefixes of the vendor_op this macro writes -#}
{%- set ops = cdc_format_ops(source_format, ['removed_row', 'backfill_prefix', 'is_deleted_prefix']) -%}
with landed as (
    {{ cdc_landed_messages(relation, source_format) }}
),

event as (
    select
        landed.*,
        try_variant_get(message, '$.source_metadata') as source_metadata,
        try_variant_get(message, '$.payload') as payload,
        try_variant_get(message, '$.source_timestamp') as source_timestamp_value,
        try_variant_get(message, '$.read_method', 'string') as read_method
    from landed
),

fields as (
    select
        event.*,
        try_variant_get(source_metadata, '$.change_type', 'string') as change_type,
        try_variant_get(source_metadata, '$.is_deleted', 'boolean') as is_deleted,
        -- the source kind is the read_method's first word: mysql, oracle, postgres(ql), sqlserver
        lower(regexp_extract(coalesce(read_method, ''), '^([A-Za-z]+)', 1)) as source_kind,
        -- read by a table scan rather than from the log: backfill, fulldump, (oracle_)dump,
        -- supplementation; such events carry no log order and are snapshots
        coalesce(read_method, '') rlike '(?i)backfill|dump|supplementation' as is_backfill,
        -- epoch milliseconds (a JSON whole number) or a time (a JSON string); nothing else
        case schema_of_variant(source_timestamp_value)
            when 'BIGINT' then timestamp_millis(try_variant_get(source_timestamp_value, '$', 'bigint'))
            when 'STRING' then try_to_timestamp(try_variant_get(source_timestamp_value, '$', 'string'))
        end as source_ts,
        -- why a source_metadata field the model reads has a JSON type the document does not allow
        case
            {%- for field, json_type, expected in [
                ('change_type', 'STRING', 'a string'),
                ('is_deleted', 'BOOLEAN', 'a boolean'),
                ('table', 'STRING', 'a string'),
            ] %}
            when {{ datastream_field_is_present("source_metadata, '$." ~ field ~ "'") }}
                and schema_of_variant(try_variant_get(source_metadata, '$.{{ field }}')) != '{{ json_type }}'
                then 'source_metadata.{{ field }} is not {{ expected }}'
            {%- endfor %}
            {%- for field in ['primary_keys', 'replication_index'] %}
            when {{ datastream_field_is_present("source_metadata, '$." ~ field ~ "'") }}
                and schema_of_variant(try_variant_get(source_metadata, '$.{{ field }}'))
                not in ('ARRAY<STRING>', 'ARRAY<VOID>')
                then 'source_metadata.{{ field }} is not a list of column names'
            {%- endfor %}
            {%- for field in ['log_position', 'scn', 'ssn'] %}
            when {{ datastream_field_is_present("source_metadata, '$." ~ field ~ "'") }}
                and not coalesce(
                    try_variant_get(source_metadata, '$.{{ field }}', 'string') rlike '^-?[0-9]+$', false
                )
                then 'source_metadata.{{ field }} is not a whole number'
            {%- endfor %}
            when {{ datastream_field_is_present("message, '$.object'") }}
                and schema_of_variant(try_variant_get(message, '$.object')) != 'STRING'
                then 'object is not a string'
        end as metadata_error,
        nullif(concat_ws(
            '.',
            try_variant_get(source_metadata, '$.database', 'string'),
            try_variant_get(source_metadata, '$.schema', 'string'),
            try_variant_get(source_metadata, '$.table', 'string')
        ), '') as metadata_table,
        try_variant_get(message, '$.object', 'string') as object_name,
        try_variant_get(source_metadata, '$.primary_keys', 'array<string>') as primary_keys,
        try_variant_get(source_metadata, '$.replication_index', 'array<string>') as replication_index,
        try_variant_get(source_metadata, '$.row_id', 'string') as row_id,
        try_variant_get(source_metadata, '$.log_file', 'string') as log_file,
        try_variant_get(source_metadata, '$.log_position', 'string') as log_position,
        try_variant_get(source_metadata, '$.scn', 'string') as scn,
        try_variant_get(source_metadata, '$.rs_id', 'string') as rs_id,
        try_variant_get(source_metadata, '$.ssn', 'string') as ssn,
        try_variant_get(source_metadata, '$.lsn', 'string') as lsn,
        case
            when {{ cdc_is_object('payload') }} then
                {%- if source_format == 'datastream_avro' %}
                    transform_values(
                        cast(payload as map<string, variant>),
                        (column_name, column_value) -> case
                            when array_sort(map_keys(try_variant_get(column_value, '$', 'map<string, variant>')))
                                = array('length', 'value')
                                then try_variant_get(column_value, '$.value')
                            when array_sort(map_keys(try_variant_get(column_value, '$', 'map<string, variant>')))
                                = array('offset', 'timestamp')
                                then try_variant_get(column_value, '$.timestamp')
                            else column_value
                        end
                    )
                {%- else %}
                    cast(payload as map<string, variant>)
                {%- endif %}
        end as payload_columns
    from event
),

decided as (
    select
        fields.*,
        -- the key the event declares: primary_keys, else SQL Server's replication_index
        case
            when size(primary_keys) > 0 then primary_keys
            when size(replication_index) > 0 then replication_index
        end as declared_keys,
        -- the payload is the row after the change; for a delete (or the old-key half of a
        -- key change) it is the row that was removed
        case
            when change_type is not null then upper(change_type) in ({{ cdc_string_list(ops['removed_row']) }})
            else coalesce(is_deleted, false)
        end as payload_is_removed_row,
        case
            when source_kind = 'mysql' then concat(
                coalesce({{ cdc_sortable_number("regexp_extract(coalesce(log_file, ''), '([0-9]+)$', 1)", 20) }}, ''),
                '.',
                coalesce({{ cdc_sortable_number('log_position', 20) }}, '')
            )
            when source_kind = 'oracle' then concat(
                coalesce({{ cdc_sortable_number('scn', 20) }}, ''),
                '.',
                array_join(transform(
                    split(regexp_replace(coalesce(rs_id, ''), '^\\s*0[xX]', ''), '[.]'),
                    rs_part -> coalesce({{ cdc_sortable_number("conv(nullif(trim(rs_part), ''), 16, 10)", 20) }}, '')
                ), ':'),
                '.',
                coalesce({{ cdc_sortable_number('ssn', 20) }}, '')
            )
            when source_kind in ('postgres', 'postgresql', 'sqlserver') then array_join(transform(
                split(coalesce(lsn, ''), '[/:]'),
                lsn_part -> coalesce({{ cdc_sortable_number("conv(nullif(trim(lsn_part), ''), 16, 10)", 20) }}, '')
            ), ':')
            else ''
        end as log_order
    from fields
),

final as (
    select
        message_id,
        message_text,
        load_batch_id,
        source_format,
        0 as record_index,
        -- change_type as written; without one, is_deleted decides; table-scan events are
        -- prefixed 'backfill:' so that seed cdc_op_codes maps them to snapshots
        -- (null without a source_metadata object: nothing says what happened)
        case when {{ cdc_is_object('source_metadata') }} then concat(
            if(is_backfill, {{ cdc_string_literal(ops['backfill_prefix']) }}, ''),
            coalesce(change_type, concat({{ cdc_string_literal(ops['is_deleted_prefix']) }}, if(coalesce(is_deleted, false), 'true', 'false')))
        ) end as vendor_op,
        coalesce(metadata_table, nullif(object_name, '')) as table_id,
        declared_keys as declared_key_columns,
        case when payload_is_removed_row then row_image end as before_image,
        case when not payload_is_removed_row then row_image end as after_image,
        false as after_image_is_partial,
        cast(null as map<string, string>) as column_types,
        case when source_ts is not null then concat(
            {{ cdc_sortable_number('cast(unix_millis(source_ts) as string)', 15) }},
            '.',
            if(is_backfill, '0', '1'),
            '.',
            log_order
        ) end as sequence_key,
        source_ts as commit_ts,
        cast(null as string) as ddl_text,
        case
            when loader_error is not null then loader_error
            when message is null then {{ cdc_unparsed_reason() }}
            when not {{ cdc_is_object('message') }} then 'message is not a JSON object'
            when {{ cdc_is_not_object('source_metadata') }} then 'source_metadata is not a JSON object'
            when not {{ cdc_is_object('source_metadata') }} then 'no source_metadata in the message'
            when metadata_error is not null then metadata_error
            -- a CDC event says what happened; a backfill row (older schemas carry neither
            -- field there) was read from the table, so it exists
            when
                not is_backfill and change_type is null
                and not {{ datastream_field_is_present("source_metadata, '$.is_deleted'") }}
                then 'no change_type or is_deleted in source_metadata'
            when {{ cdc_is_not_object('payload') }} then 'payload is not a JSON object'
            when not {{ cdc_is_object('payload') }} then 'no payload in the message'
            when source_timestamp_value is null or is_variant_null(source_timestamp_value)
                then 'no source_timestamp in the message'
            when source_ts is null then 'source_timestamp is not a timestamp'
        end as format_error
    from (
        select
            decided.*,
            case when payload_columns is not null then to_variant_object(
                -- without a declared key, Oracle's row_id locates the row (as in Google's templates)
                if(
                    declared_keys is null and row_id is not null
                    and not map_contains_key(payload_columns, '_metadata_row_id'),
                    map_concat(payload_columns, map('_metadata_row_id', cast(row_id as variant))),
                    payload_columns
                )
            ) end as row_image
        from decided
    ) as imaged
)

select * from final
{% endmacro %}
