{#
    Alibaba DTS Canal JSON (source document 002) -> canonical records, one per row of
    `data` (a message may carry several rows; `old` is aligned with `data` by position).
    `old` holds only the changed columns' previous values; `data` is the complete row,
    so the complete before row is `data` overlaid with `old`. Ordering: `es` (binlog time, ms), then `id` (DTS offset), then the row position.
    Values are strings typed by `mysqlType` (base type name, lower-cased, parameters
    dropped) through var cdc_formats.canal_json.value_types.
    Sources listed in var cdc_canal_json_legacy_sources (instances created before
    2022-03-20) swap `data` and `old`: `old` is the row after the change (complete) and
    `data` the row before; a DELETE's row is in `old`.
    Each row is a record of its own: a bad row (not an object, no key) is quarantined alone
    and the message's other rows apply; `data` and `old` of different lengths cannot be
    paired, so then every row of the message is quarantined. A field of the wrong JSON type
    is quarantined naming the field; a row without database, es, id or mysqlType is too
    (untyped values would give the key another JSON type than the table's other rows).
#}
{% macro flatten_canal_json(relation) %}
    {{ cdc_check_relation('flatten_canal_json', relation, "the landing relation, e.g. source('cdc_landing', 'raw_cdc_messages')") }}
    {%- set legacy_sources = var('cdc_canal_json_legacy_sources', []) -%}
    {%- if legacy_sources is string or legacy_sources is mapping or legacy_sources is not iterable -%}
        {{ exceptions.raise_compiler_error(
            "flatten_canal_json: var cdc_canal_json_legacy_sources must be a list of database or "
            ~ "database.table names (or '*'), e.g. ['olddb', 'shop.orders']; got " ~ legacy_sources) }}
    {%- endif -%}
    {{ return(adapter.dispatch('flatten_canal_json', 'cdc')(relation, legacy_sources)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__flatten_canal_json(relation, legacy_sources) %}
    {{ cdc_unsupported_adapter('flatten_canal_json') }}
{% endmacro %}

{% macro spark__flatten_canal_json(relation, legacy_sources) %}
{#- op facts (var cdc_formats, canal_json.ops): which ops' rows are in data (legacy: old), which
    pairs with old's rows, which is a before image -#}
{%- set ops = cdc_format_ops('canal_json', ['row_ops', 'update', 'delete']) -%}
{%- set update_op = cdc_string_literal(ops['update']) -%}
{%- set delete_op = cdc_string_literal(ops['delete']) -%}
{%- set legacy_list -%}
    array_compact(array(cast(null as string){% for source in legacy_sources %}, '{{ source | string | replace("\\", "\\\\") | replace("'", "\\'") }}'{% endfor %}))
{%- endset %}
{#- the envelope fields read below, each a variant whose JSON type is checked (a message that is
    not exactly one JSON object has no envelope: cdc_envelope_error says why) -#}
{%- set envelope_schema -%}
    struct<
        type: variant, isDdl: variant, database: variant, table: variant, es: variant, id: variant,
        sql: variant, pkNames: variant, mysqlType: variant, data: variant, old: variant
    >
{%- endset %}
with landed as (
    {{ cdc_landed_messages(relation, 'canal_json', envelope_schema | replace('\n', ' ')) }}
),

fields as (
    select
        landed.*,
        envelope.type as type_value,
        envelope.isDdl as is_ddl_value,
        envelope.database as database_value,
        envelope.table as table_value,
        envelope.es as es_value,
        envelope.id as id_value,
        envelope.pkNames as pk_names_value,
        envelope.mysqlType as mysql_types_value,
        try_variant_get(envelope.type, '$', 'string') as vendor_op,
        coalesce(try_variant_get(envelope.isDdl, '$', 'boolean'), false) as is_ddl,
        try_variant_get(envelope.database, '$', 'string') as database_name,
        try_variant_get(envelope.table, '$', 'string') as table_name,
        try_variant_get(envelope.es, '$', 'string') as es_text,
        try_variant_get(envelope.id, '$', 'string') as id_text,
        try_variant_get(envelope.sql, '$', 'string') as sql_text,
        try_variant_get(envelope.pkNames, '$', 'array<string>') as pk_names,
        try_variant_get(envelope.pkNames, '$', 'array<variant>') as pk_name_values,
        try_variant_get(envelope.mysqlType, '$', 'map<string, string>') as mysql_types,
        try_variant_get(envelope.mysqlType, '$', 'map<string, variant>') as mysql_type_values,
        envelope.data as data_value,
        envelope.old as old_value,
        try_variant_get(envelope.data, '$', 'array<variant>') as data_rows,
        try_variant_get(envelope.old, '$', 'array<variant>') as old_rows
    from landed
),

moded as (
    select
        fields.*,
        (
            array_contains({{ legacy_list }}, database_name)
            or array_contains({{ legacy_list }}, concat_ws('.', database_name, table_name))
            or array_contains({{ legacy_list }}, '*')
        ) as is_legacy
    from fields
),

-- which array holds the rows the records are counted by, and which holds their partners
sided as (
    select
        moded.*,
        case
            when not is_legacy then data_rows
            when vendor_op in ({{ cdc_string_list(ops['row_ops']) }}) then coalesce(old_rows, data_rows)
            else data_rows
        end as main_rows,
        case
            when not is_legacy and vendor_op = {{ update_op }} then old_rows
            when is_legacy and vendor_op = {{ update_op }} then data_rows
        end as partner_rows
    from moded
),

exploded as (
    select
        sided.*,
        row_position,
        main_row
    from sided
    lateral view posexplode_outer(main_rows) exploded_rows as row_position, main_row
),

imaged as (
    select
        exploded.*,
        try_element_at(partner_rows, coalesce(row_position, 0) + 1) as partner_row,
        transform_values(
            mysql_types, (column_name, mysql_type) -> lower(regexp_extract(trim(mysql_type), '^([A-Za-z]+)', 1))
        ) as base_types
    from exploded
),

images as (
    select
        imaged.*,
        case
            when vendor_op = {{ delete_op }} then main_row
            when vendor_op = {{ update_op }} and is_legacy then partner_row
            -- `old` holds the previous values of the changed columns only; every other column
            -- is unchanged, so the complete before row is `data` overlaid with `old`
            when vendor_op = {{ update_op }} and {{ cdc_is_not_object('main_row') }} then main_row
            when vendor_op = {{ update_op }} and {{ cdc_is_not_object('partner_row') }} then partner_row
            when vendor_op = {{ update_op }} then to_variant_object(map_concat(
                map_filter(
                    cast(main_row as map<string, variant>),
                    (column_name, column_value) -> not map_contains_key(
                        cast(partner_row as map<string, variant>), column_name
                    )
                ),
                cast(partner_row as map<string, variant>)
            ))
        end as before_row,
        case when vendor_op != {{ delete_op }} and not is_ddl then main_row end as after_row
    from imaged
),

final as (
    select
        message_id,
        message_text,
        load_batch_id,
        source_format,
        coalesce(row_position, 0) as record_index,
        vendor_op,
        -- a table is named by its database and its own name; without either it is no table
        case
            when nullif(database_name, '') is not null and nullif(table_name, '') is not null
                then concat(database_name, '.', table_name)
        end as table_id,
        pk_names as declared_key_columns,
        {{ cdc_typed_image('before_row', 'base_types', 'canal_json') }} as before_image,
        {{ cdc_typed_image('after_row', 'base_types', 'canal_json') }} as after_image,
        false as after_image_is_partial,
        mysql_types as column_types,
        concat(
            {{ cdc_sortable_number('es_text', 20) }},
            {{ cdc_sortable_number('id_text', 20) }},
            {{ cdc_sortable_number('cast(coalesce(row_position, 0) as string)', 10) }}
        ) as sequence_key,
        timestamp_millis(try_cast(es_text as bigint)) as commit_ts,
        case when is_ddl then sql_text end as ddl_text,
        case
            when loader_error is not null then loader_error
            when envelope is null then {{ cdc_envelope_error() }}
            when schema_of_variant(type_value) not in ('STRING', 'VOID') then 'type is not a string'
            when schema_of_variant(is_ddl_value) not in ('BOOLEAN', 'VOID') then 'isDdl is not true or false'
            when schema_of_variant(database_value) not in ('STRING', 'VOID') then 'database is not a string'
            when schema_of_variant(table_value) not in ('STRING', 'VOID') then 'table is not a string'
            when data_value is not null and not is_variant_null(data_value) and data_rows is null
                then 'data is not a JSON array'
            when old_value is not null and not is_variant_null(old_value) and old_rows is null
                then 'old is not a JSON array'
            when vendor_op = {{ update_op }} and size(old_rows) != size(data_rows)
                then 'data and old do not have the same number of rows'
            when {{ cdc_is_not_object('main_row') }} then 'a row of data/old is not a JSON object'
            when {{ cdc_is_not_object('partner_row') }} then 'a row of data/old is not a JSON object'
            when
                es_value is not null and not is_variant_null(es_value)
                and {{ cdc_sortable_number('es_text', 20) }} is null
                then 'es is not a whole number'
            when
                id_value is not null and not is_variant_null(id_value)
                and {{ cdc_sortable_number('id_text', 20) }} is null
                then 'id is not a whole number'
            when
                schema_of_variant(pk_names_value) != 'VOID'
                and (
                    schema_of_variant(pk_names_value) not like 'ARRAY<%'
                    or exists(pk_name_values, name -> schema_of_variant(name) != 'STRING')
                )
                then 'pkNames is not a list of column names'
            when
                schema_of_variant(mysql_types_value) != 'VOID'
                and (
                    schema_of_variant(mysql_types_value) not like 'OBJECT<%'
                    or exists(map_values(mysql_type_values), type_name -> schema_of_variant(type_name) != 'STRING')
                )
                then 'mysqlType is not a JSON object of column type names'
            when {{ cdc_is_object('main_row') }} and es_text is null then 'no es (binlog time, ms) in the message'
            when {{ cdc_is_object('main_row') }} and id_text is null
                then 'no id (operation sequence number) in the message'
            when {{ cdc_is_object('main_row') }} and nullif(database_name, '') is null
                then 'no database in the message'
            when {{ cdc_is_object('main_row') }} and mysql_types is null
                then 'no mysqlType in the message: the values of data cannot be typed'
        end as format_error
    from images
)

select * from final
{% endmacro %}

