{#
    A column name from the data as a Spark identifier: backquoted, inner backquotes
    doubled, so any character a source column name holds is safe.
#}
{% macro cdc_quote_identifier(name) %}
    {%- if name is not string or name | length == 0 -%}
        {{ cdc_argument_error('cdc_quote_identifier', 'name', 'a column name (non-empty string)', name) }}
    {%- endif -%}
    `{{ name | replace('`', '``') }}`
{%- endmacro %}

{# Each of the column names `names` as cdc_quote_identifier quotes it, in order (a list). #}
{% macro cdc_quote_identifiers(names) %}
    {%- set quoted = [] -%}
    {%- for name in names -%}{%- do quoted.append(cdc_quote_identifier(name)) -%}{%- endfor -%}
    {{ return(quoted) }}
{%- endmacro %}
