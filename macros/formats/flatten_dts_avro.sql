{#
    Alibaba DTS Avro `com.alibaba.dts.formats.avro.Record` (source document 002), as
    rendered to JSON by the loader (src/cdc_dbt_spark/avro.py, union records as
    [record name, record]) -> canonical records, one per message. `fields` names the
    columns; `beforeImages` / `afterImages` hold one union value per field, in field order,
    typed per branch (Integer, Decimal, Float, Timestamp, DateTime, Character, TextObject,
    BinaryObject, ...) through var cdc_formats.dts_avro.value_types. A DDL's statement is
    the string in `afterImages`; a DDL that is a TRUNCATE statement is a truncate. Key:
    tags.pk_uk_info PRIMARY. Ordering: sourcePosition (MySQL `offset@file`: file, then
    offset), then `id`.
#}
{% macro flatten_dts_avro(relation) %}
    {{ cdc_check_relation('flatten_dts_avro', relation, "the landing relation, e.g. source('cdc_landing', 'raw_cdc_messages')") }}
    {{ return(adapter.dispatch('flatten_dts_avro', 'cdc')(relation)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__flatten_dts_avro(relation) %}
    {{ cdc_unsupported_adapter('flatten_dts_avro') }}
{% endmacro %}

{% macro spark__flatten_dts_avro(relation) %}
{#- op facts (var cdc_formats, dts_avro.ops): the ops whose afterImages is a statement, the DDL
    op, and the name of a DDL that truncates -#}
{%- set ops = cdc_format_ops('dts_avro', ['statement_ops', 'ddl', 'truncate']) -%}
{%- set statement_ops = cdc_string_list(ops['statement_ops']) -%}
{%- set branch -%}
    case
        when schema_of_variant(image_value) = 'STRING' then 'EmptyObject'
        else regexp_extract(try_variant_get(image_value, '$[0]', 'string'), '([A-Za-z]+)$', 1)
    end
{%- endset -%}
{#- union branches whose value is a number as text (conversion dts_number), and those that are
    bytes in a charset (dts_character): a value of these that does not read is quarantined -#}
{%- set value_types = var('cdc_formats')['dts_avro']['value_types'] -%}
{%- set number_branches = value_types | dictsort | selectattr(1, 'equalto', 'dts_number') | map(attribute=0) | list -%}
{%- set character_branches = value_types | dictsort | selectattr(1, 'equalto', 'dts_character') | map(attribute=0) | list -%}
{%- set payload -%}
    case
        when image_value is null or is_variant_null(image_value) then parse_json('null')
        when schema_of_variant(image_value) = 'STRING' then parse_json('null')
        else coalesce(try_variant_get(image_value, '$[1]'), parse_json('null'))
    end
{%- endset -%}
with landed as (
    {{ cdc_landed_messages(relation, 'dts_avro') }}
),

fields as (
    select
        landed.*,
        -- DTS has no truncate operation: a truncate arrives as DDL with its statement
        -- (seed cdc_op_codes: dts_avro TRUNCATE), and must end the table's live rows
        case
            when
                try_variant_get(message, '$.operation', 'string') = {{ cdc_string_literal(ops['ddl']) }}
                and try_variant_get(message, '$.afterImages', 'string') rlike '^(?i)\\s*truncate\\s'
                then {{ cdc_string_literal(ops['truncate']) }}
            else try_variant_get(message, '$.operation', 'string')
        end as vendor_op,
        try_variant_get(message, '$.objectName', 'string') as object_name,
        try_variant_get(message, '$.id', 'string') as id_text,
        try_variant_get(message, '$.sourceTimestamp', 'bigint') as source_seconds,
        try_variant_get(message, '$.bornTimestamp', 'bigint') as born_millis,
        try_variant_get(message, '$.sourcePosition', 'string') as source_position,
        try_variant_get(message, '$.tags.pk_uk_info', 'string') as pk_uk_info,
        transform(
            try_variant_get(message, '$.fields', 'array<variant>'),
            field -> try_variant_get(field, '$.name', 'string')
        ) as field_names,
        try_variant_get(message, '$.beforeImages', 'array<variant>') as before_values,
        try_variant_get(message, '$.afterImages', 'array<variant>') as after_values,
        try_variant_get(message, '$.beforeImages', 'string') as before_text,
        try_variant_get(message, '$.afterImages', 'string') as after_text
    from landed
),

parsed_tags as (
    select
        fields.*,
        try_parse_json(pk_uk_info) as pk_uk_json
    from fields
),

checked as (
    select
        parsed_tags.*,
        try_variant_get(pk_uk_json, '$.PRIMARY', 'array<string>') as primary_key,
        (before_values is null or size(before_values) = size(field_names))
        and (after_values is null or size(after_values) = size(field_names))
        and size(array_distinct(field_names)) = size(field_names)
        and not array_contains(transform(field_names, name -> name is null), true) as images_fit
    from parsed_tags
),

imaged as (
    select
        checked.*,
        case when images_fit and before_values is not null then
            to_variant_object(map_from_arrays(field_names, transform(before_values, image_value -> {{ payload }})))
        end as before_row,
        case when images_fit and after_values is not null then
            to_variant_object(map_from_arrays(field_names, transform(after_values, image_value -> {{ payload }})))
        end as after_row,
        case when images_fit and coalesce(after_values, before_values) is not null then
            map_from_arrays(
                field_names,
                zip_with(
                    coalesce(after_values, before_values),
                    coalesce(before_values, after_values),
                    (after_value, before_value) -> coalesce(
                        {{ branch | replace('image_value', 'after_value') }},
                        {{ branch | replace('image_value', 'before_value') }}
                    )
                )
            )
        end as branch_types,
        regexp_extract(source_position, '^([0-9]+)@([0-9]+)$', 1) as position_offset,
        regexp_extract(source_position, '^([0-9]+)@([0-9]+)$', 2) as position_file,
        -- the first value (after image, then before image) of a number or charset branch that
        -- does not read as one: its column, branch and text
        case when images_fit then
            element_at(filter(
                concat(
                    {%- for values in ('after_values', 'before_values') %}
                    zip_with(field_names, coalesce({{ values }}, array()), (name, image_value) -> named_struct(
                        'name', name, 'branch', {{ branch }},
                        'charset', lower(try_variant_get(image_value, '$[1].charset', 'string')),
                        'text', try_variant_get(image_value, '$[1].value', 'string')
                    )){{ ',' if not loop.last }}
                    {%- endfor %}
                ),
                item -> (
                    item.branch in ({{ cdc_string_list(number_branches) }})
                    and {{ cdc_json_number('item.text') }} is null
                ) or (
                    item.branch in ({{ cdc_string_list(character_branches) }})
                    and item.charset in ('utf8', 'utf8mb4', 'utf8mb3', 'utf-8')
                    and not coalesce(is_valid_utf8(cast(try_to_binary(item.text, 'base64') as string)), false)
                )
            ), 1)
        end as unreadable_value
    from checked
),

keyed as (
    select
        imaged.*,
        -- key columns (tag pk_uk_info) whose value is null (EmptyObject, or the union's null)
        filter(
            primary_key,
            column_name -> is_variant_null(try_element_at(cast(after_row as map<string, variant>), column_name))
            or is_variant_null(try_element_at(cast(before_row as map<string, variant>), column_name))
        ) as null_key_columns
    from imaged
),

final as (
    select
        message_id,
        message_text,
        load_batch_id,
        source_format,
        0 as record_index,
        vendor_op,
        nullif(object_name, '') as table_id,
        nullif(primary_key, array()) as declared_key_columns,
        {{ cdc_typed_image('before_row', 'branch_types', 'dts_avro') }} as before_image,
        {{ cdc_typed_image('after_row', 'branch_types', 'dts_avro') }} as after_image,
        false as after_image_is_partial,
        branch_types as column_types,
        case
            when position_offset != ''
                then concat(
                    {{ cdc_sortable_number('position_file', 20) }},
                    {{ cdc_sortable_number('position_offset', 20) }},
                    {{ cdc_sortable_number('id_text', 20) }}
                )
            -- not a MySQL binlog position: the log time (seconds), then the stream id
            else concat(
                {{ cdc_sortable_number('cast(source_seconds as string)', 20) }},
                {{ cdc_sortable_number('id_text', 20) }}
            )
        end as sequence_key,
        -- both 0: no time at all (not 1970)
        case
            when born_millis > 0 then timestamp_millis(born_millis)
            when source_seconds > 0 then timestamp_seconds(source_seconds)
        end as commit_ts,
        case when vendor_op in ({{ statement_ops }}) then after_text end as ddl_text,
        case
            when loader_error is not null then loader_error
            when message is null then {{ cdc_unparsed_reason() }}
            when not {{ cdc_is_object('message') }} then 'message is not a JSON object'
            when vendor_op not in ({{ statement_ops }}) and before_values is null and before_text is not null
                then 'beforeImages is a string where a list of values (one per field) is expected'
            when vendor_op not in ({{ statement_ops }}) and after_values is null and after_text is not null
                then 'afterImages is a string where a list of values (one per field) is expected'
            when vendor_op in ({{ statement_ops }}) and after_values is not null
                then 'afterImages of a DDL is not its statement (a string)'
            when coalesce(before_values, after_values) is not null and field_names is null
                then 'fields is not a list of fields (name, dataTypeNumber) beside the images'
            when not images_fit then 'beforeImages/afterImages do not match fields (count or names)'
            when unreadable_value is not null
                then concat(
                    'column ', unreadable_value.name, ': ', unreadable_value.branch,
                    case
                        when unreadable_value.charset is not null
                            then concat(' value is not valid ', unreadable_value.charset)
                        else concat(' value is not a number: ', coalesce(to_json(cast(unreadable_value.text as variant)), 'null'))
                    end
                )
            when
                pk_uk_info is not null
                and (
                    not coalesce({{ cdc_is_object('pk_uk_json') }}, false)
                    or (try_variant_get(pk_uk_json, '$.PRIMARY') is not null and primary_key is null)
                )
                then 'tags.pk_uk_info is not JSON like {"PRIMARY": [column names]}'
            when size(null_key_columns) > 0
                then concat('key column is null in the row image: ', to_json(null_key_columns))
            when
                position_offset != ''
                and ({{ cdc_sortable_number('position_file', 20) }} is null
                or {{ cdc_sortable_number('position_offset', 20) }} is null)
                then concat(
                    'sourcePosition is offset@file with a number longer than 20 digits: ', to_json(cast(source_position as variant))
                )
            when id_text is not null and {{ cdc_sortable_number('id_text', 20) }} is null
                then 'id is not a whole number'
        end as format_error
    from keyed
)

select * from final
{% endmacro %}
