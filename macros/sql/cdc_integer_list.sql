{# The first column of a query's rows, as whole numbers (for inlining into SQL). #}
{% macro cdc_integer_list(query) %}
    {% if query is not string or not query | trim %}
        {{ cdc_argument_error('cdc_integer_list', 'query', 'a SQL query (non-empty string)', query) }}
    {% endif %}
    {% set values = [] %}
    {% for value in run_query(query).columns[0].values() %}
        {% do values.append(value | int) %}
    {% endfor %}
    {{ return(values) }}
{% endmacro %}
