{#- Every row satisfies a SQL boolean `expression` (dbt_utils.expression_is_true). -#}
{% test expression_is_true(model, expression) %}
    {% if not expression %}
        {{ exceptions.raise_compiler_error("expression_is_true: give the `expression` every row must satisfy") }}
    {% endif %}
    select * from {{ model }} where not coalesce({{ expression }}, false)
{% endtest %}
