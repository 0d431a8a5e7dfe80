{# Values as a comma-separated list of Spark SQL string literals (cdc_string_literal), for `in (...)`. #}
{% macro cdc_string_list(values) -%}
    {%- if values is string or values is mapping or values is not iterable or values | length == 0 -%}
        {{ cdc_argument_error('cdc_string_list', 'values', 'a non-empty list of texts', values) }}
    {%- endif -%}
    {%- for value in values -%}
        {{ cdc_string_literal(value) }}{{ ', ' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
