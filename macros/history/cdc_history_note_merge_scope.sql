{#
    The partitions of cdc_history an incremental run's MERGE may match (the plan's current_buckets
    and closed_partitions), noted for cdc_history_merge_sql: the model works the plan out while dbt
    compiles it, the MERGE runs after, in the same invocation. Kept in the invocation's state
    'cdc_history_merge_scope' (cdc_invocation_state, as cdc_batch_watermark keeps the watermark),
    so passing them costs no statement. Called by the model once its plan is worked out, so that
    the plan's queries run once per run.
#}
{% macro cdc_history_note_merge_scope(plan) %}
    {% for value in plan.current_buckets + plan.closed_partitions if value is not integer %}
        {{ cdc.cdc_argument_error('cdc_history_note_merge_scope', 'plan', 'a cdc_history_plan (whole-number partition lists)', plan) }}
    {% endfor %}
    {% do cdc_invocation_state('cdc_history_merge_scope', {}).update({
        'current_buckets': plan.current_buckets, 'closed_partitions': plan.closed_partitions}) %}
{% endmacro %}
