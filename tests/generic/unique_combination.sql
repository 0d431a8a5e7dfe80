{#- Rows are unique on the combination of `columns` (dbt_utils.unique_combination_of_columns). -#}
{% test unique_combination(model, columns) %}
    {% if columns is string or columns | length == 0 %}
        {{ exceptions.raise_compiler_error("unique_combination: `columns` must be a non-empty list of column names") }}
    {% endif %}
    {%- set quoted = cdc_quote_identifiers(columns) %}
    select {{ quoted | join(', ') }}, count(*) as copies
    from {{ model }}
    group by {{ quoted | join(', ') }}
    having count(*) > 1
{% endtest %}
