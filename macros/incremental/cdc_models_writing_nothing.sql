{#
    The models that write nothing in this invocation: a list of unique ids, kept in its `graph`.
    A model adds itself while it compiles when it knows its query is empty (int_cdc_key_changes
    with no new key change to carry); the incremental materialization adds a model of record
    kinds the new batches hold none of (config cdc_record_kinds). The materialization then
    sends nothing for the model (its table exists and stays as it is), and its data tests
    scoped `__cdc_run_wrote__` send no query (cdc_run_scope_where, test materialization).
#}
{% macro cdc_models_writing_nothing() %}
    {{ return(cdc_invocation_state('cdc_models_writing_nothing', [])) }}
{% endmacro %}
