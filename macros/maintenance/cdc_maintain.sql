{#
    Keeps the project's Delta tables cheap to read: OPTIMIZE compacts the small files that
    incremental runs add (a run adds a few files per partition it writes) and VACUUM removes the
    files no version younger than `retain_hours` needs (Delta refuses less than a week unless
    spark.databricks.delta.retentionDurationCheck.enabled is false). Every table, the landing
    table included. Time travel and cdc_restore reach back `retain_hours` after it.

        dbt run-operation cdc_maintain                          # e.g. nightly
        dbt run-operation cdc_maintain --args '{retain_hours: 336}'
#}
{% macro cdc_maintain(retain_hours=168, listing_tasks=16) %}
    {% if retain_hours is not number or retain_hours < 0 %}
        {{ cdc_argument_error('cdc_maintain', 'retain_hours', 'a number of hours (at least 0)', retain_hours) }}
    {% endif %}
    {% if listing_tasks is not integer or listing_tasks < 1 %}
        {{ cdc_argument_error('cdc_maintain', 'listing_tasks', 'a whole number of at least 1', listing_tasks) }}
    {% endif %}
    {# VACUUM lists a table's folders in this many tasks (Spark's default, 10000, took 108 s for a
       small table on two cores) #}
    {% do run_query('set spark.sql.sources.parallelPartitionDiscovery.parallelism = ' ~ listing_tasks) %}
    {% for relation in cdc_project_tables(include_landing=true) %}
        {% do run_query('optimize ' ~ relation) %}
        {% do run_query('vacuum ' ~ relation ~ ' retain ' ~ retain_hours ~ ' hours') %}
        {{ log('cdc_maintain: ' ~ relation ~ ' optimized and vacuumed (versions of the last ' ~ retain_hours ~ ' hours kept)', info=true) }}
    {% endfor %}
    {% do run_query('reset spark.sql.sources.parallelPartitionDiscovery.parallelism') %}
{% endmacro %}
