{# A value as a Spark SQL string literal: quotes and backslashes escaped. #}
{% macro cdc_string_literal(value) -%}
    '{{ value | string | replace('\\', '\\\\') | replace("'", "\\'") }}'
{%- endmacro %}
