{# One source column out of a row image map, as a real column of `data_type` (null when absent). #}
{% macro cdc_typed_column(row_columns, column_name, data_type) %}
    {%- if row_columns is not string or not row_columns | trim -%}
        {{ cdc_argument_error('cdc_typed_column', 'row_columns', 'a SQL expression (non-empty string)', row_columns) }}
    {%- endif -%}
    {%- if column_name is not string or not column_name | trim -%}
        {{ cdc_argument_error('cdc_typed_column', 'column_name', 'a column name (non-empty string)', column_name) }}
    {%- endif -%}
    {%- if data_type is not string or not modules.re.match('^[A-Za-z][A-Za-z0-9_(), <>:]*$', data_type) -%}
        {{ cdc_argument_error('cdc_typed_column', 'data_type', 'a Spark type name', data_type) }}
    {%- endif -%}
    try_variant_get({{ row_columns }}[{{ cdc_string_literal(column_name) }}], '$', '{{ data_type }}')
        as {{ cdc_quote_identifier(column_name) }}
{%- endmacro %}
