{#
    A seed's text column with empty cells as null: dbt-spark's session target loads an empty cell
    of a string column as the text 'None' (no seed here holds that text).
#}
{% macro seed_text(column) %}
    {%- if column is not string or not column | trim -%}
        {{ exceptions.raise_compiler_error('seed_text: argument column must be a column name, got ' ~ column | string | tojson) }}
    {%- endif -%}
    nullif(cast({{ column }} as string), 'None')
{%- endmacro %}
