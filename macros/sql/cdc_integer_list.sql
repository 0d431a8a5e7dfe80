{# The first column of a query's rows, as whole numbers (for inlining into SQL). #}
{% macro cdc_integer_list(query) %}
    {% set values = [] %}
    {% for value in run_query(query).columns[0].values() %}
        {% do values.append(value | int) %}
    {% endfor %}
    {{ return(values) }}
{% endmacro %}
