{#
    Column -> declared type, from the `fields` of a Kafka Connect struct schema as the JSON
    converter writes them (Debezium JSON and CDL JSON). A logical type the format knows (a key of
    its `value_types` or `declared_types` in var cdc_formats) is named by its logical name, a
    Decimal with its parameters: `org.apache.kafka.connect.data.Decimal(scale=2,connect.decimal.precision=5)`
    (no precision when the schema gives none). Any other field is named by its type (`int32`,
    `double`, `string`, ...): a logical name the project does not list (io.debezium.data.Json,
    io.debezium.data.Enum, ...) still declares the type its values are sent as.
#}
{% macro cdc_kafka_connect_column_types(fields, source_format) %}
    {%- if fields is not string or not fields | trim -%}
        {{ cdc_argument_error('cdc_kafka_connect_column_types', 'fields', 'a SQL expression (non-empty string)', fields) }}
    {%- endif -%}
    {%- if source_format is not string or source_format not in var('cdc_formats') -%}
        {{ cdc_argument_error('cdc_kafka_connect_column_types', 'source_format', 'a format declared in var cdc_formats (dbt_project.yml)', source_format) }}
    {%- endif -%}
    {{ return(adapter.dispatch('cdc_kafka_connect_column_types', 'cdc')(fields, source_format)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_kafka_connect_column_types(fields, source_format) %}
    {{ cdc_unsupported_adapter('cdc_kafka_connect_column_types') }}
{% endmacro %}

{% macro spark__cdc_kafka_connect_column_types(fields, source_format) %}
    {%- set settings = var('cdc_formats')[source_format] -%}
    {%- set known = [] -%}
    {%- for vendor_type in (settings.get('value_types') or {}).keys() | list + (settings.get('declared_types') or {}).keys() | list -%}
        {%- do known.append(cdc_string_literal(vendor_type | lower)) -%}
    {%- endfor -%}
    map_from_entries(transform(
        {{ fields }},
        column_field -> struct(
            column_field.field,
            concat(
                {% if known -%}
                if(lower(column_field.name) in ({{ known | unique | join(', ') }}), column_field.name, column_field.type),
                {%- else -%}
                column_field.type,
                {%- endif %}
                if(
                    column_field.parameters['scale'] is not null,
                    concat(
                        '(scale=', column_field.parameters['scale'],
                        if(
                            column_field.parameters['connect.decimal.precision'] is not null,
                            concat(',connect.decimal.precision=', column_field.parameters['connect.decimal.precision']),
                            ''
                        ),
                        ')'
                    ),
                    ''
                )
            )
        )
    ))
{% endmacro %}
