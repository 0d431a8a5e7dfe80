{#
    A column name from the data as a Spark identifier: backquoted, inner backquotes
    doubled, so any character a source column name holds is safe.
#}
{% macro cdc_quote_identifier(name) %}
    {%- if name is not string or name | length == 0 -%}
        {{ exceptions.raise_compiler_error("cdc_quote_identifier: a column name must be a non-empty string") }}
    {%- endif -%}
    `{{ name | replace('`', '``') }}`
{%- endmacro %}
