{#
    A seed's text column with empty cells as null: dbt-spark's session target loads an empty cell
    of a string column as the text 'None' (no seed here holds that text).
#}
{% macro seed_text(column) %}
    {%- if column is not string or not column | trim -%}
        {{ cdc.cdc_argument_error('seed_text', 'column', 'a column name', column) }}
    {%- endif -%}
    nullif(cast({{ column }} as string), 'None')
{%- endmacro %}
