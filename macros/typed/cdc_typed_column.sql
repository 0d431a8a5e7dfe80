{# One source column out of a row image map, as a real column of `data_type` (null when absent). #}
{% macro cdc_typed_column(row_columns, column_name, data_type) %}
    {%- if not modules.re.match('^[A-Za-z][A-Za-z0-9_(), <>:]*$', data_type | string) -%}
        {{ exceptions.raise_compiler_error("cdc_typed_column: '" ~ data_type ~ "' is not a Spark type name") }}
    {%- endif -%}
    try_variant_get({{ row_columns }}[{{ cdc_string_literal(column_name) }}], '$', '{{ data_type }}')
        as {{ cdc_quote_identifier(column_name) }}
{%- endmacro %}
