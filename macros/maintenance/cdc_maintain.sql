{#
    Keeps the project's Delta tables cheap to read: OPTIMIZE compacts the small files that
    incremental runs add (a run adds a few files per partition it writes) and VACUUM removes the
    files no version younger than `retain_hours` needs (Delta refuses less than a week unless
    spark.databricks.delta.retentionDurationCheck.enabled is false). Every table, the landing
    table included. Time travel and cdc_restore reach back `retain_hours` after it.

        dbt run-operation cdc_maintain                          # e.g. nightly
        dbt run-operation cdc_maintain --args '{retain_hours: 336}'
#}
{% macro cdc_maintain(retain_hours=168) %}
    {% if retain_hours is not number or retain_hours < 0 %}
        {{ cdc_argument_error('cdc_maintain', 'retain_hours', 'a number of hours (at least 0)', retain_hours) }}
    {% endif %}
    {% for relation in cdc_project_tables(include_landing=true) %}
        {% set optimized = run_query('optimize ' ~ relation) %}
        {% do run_query('vacuum ' ~ relation ~ ' retain ' ~ retain_hours ~ ' hours') %}
        {{ log('cdc_maintain: ' ~ relation ~ ' optimized and vacuumed (versions of the last ' ~ retain_hours ~ ' hours kept)', info=true) }}
    {% endfor %}
{% endmacro %}
