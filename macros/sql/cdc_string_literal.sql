{# A value as a Spark SQL string literal: quotes and backslashes escaped. #}
{% macro cdc_string_literal(value) -%}
    {%- if value is none or value is mapping or (value is iterable and value is not string) -%}
        {{ cdc_argument_error('cdc_string_literal', 'value', 'a text or a number', value) }}
    {%- endif -%}
    '{{ value | string | replace('\\', '\\\\') | replace("'", "\\'") }}'
{%- endmacro %}
