{#
    The partitions of cdc_history an incremental run's MERGE may match (the plan's current_buckets
    and closed_partitions), noted in a session view that cdc_history_merge_sql reads: the model
    works the plan out while dbt compiles it, the MERGE runs after. Called by the model once its
    plan is worked out, so that the plan's queries run once per run.
#}
{% macro cdc_history_note_merge_scope(plan) %}
    {% for value in plan.current_buckets + plan.closed_partitions if value is not integer %}
        {{ cdc.cdc_argument_error('cdc_history_note_merge_scope', 'plan', 'a cdc_history_plan (whole-number partition lists)', plan) }}
    {% endfor %}
    {% set rows = [] %}
    {% for bucket in plan.current_buckets %}
        {% do rows.append('(true, ' ~ bucket ~ ')') %}
    {% endfor %}
    {% for partition in plan.closed_partitions %}
        {% do rows.append('(false, ' ~ partition ~ ')') %}
    {% endfor %}
    {% do run_query(
        'create or replace temporary view ' ~ cdc_history_merge_scope_view() ~ ' as select '
        ~ ('* from values ' ~ rows | join(', ') ~ ' as scope (is_current, history_partition)' if rows
           else 'cast(null as boolean) as is_current, cast(null as bigint) as history_partition where false')
    ) %}
{% endmacro %}
