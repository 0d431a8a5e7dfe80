{#
    dbt-spark's MERGE of the `merge` incremental strategy (found first through the project's
    dispatch search order), for models that need more than update and insert: a model with
    config cdc_merge='scd2_versions' (cdc_history) gets cdc_history_merge_sql, which also deletes
    and skips unchanged rows; every other model dbt-spark's own.
#}
{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates=none) %}
    {% set cdc_merge = config.get('cdc_merge') %}
    {% if cdc_merge is none %}
        {{ return(dbt.spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates)) }}
    {% elif cdc_merge == 'scd2_versions' %}
        {{ return(cdc_history_merge_sql(target, source)) }}
    {% else %}
        {{ cdc_argument_error('spark__get_merge_sql', 'config cdc_merge', "none or 'scd2_versions'", cdc_merge) }}
    {% endif %}
{% endmacro %}
