{#
    The newest landing batch that a complete `dbt build` has processed: the max
    load_batch_id of cdc_load_batches, which is built last. Incremental models take
    batches above it, so a run that failed or was killed is simply redone. -1 (take
    everything) on a full refresh or before cdc_load_batches exists.
#}
{% macro cdc_batch_watermark() %}
    {% if not execute or flags.FULL_REFRESH %}
        {{ return(-1) }}
    {% endif %}
    {% set ledger = cdc_previous_run_relation('cdc_load_batches') %}
    {% if ledger is none %}
        {{ return(-1) }}
    {% endif %}
    {{ return(cdc_integer_list('select coalesce(max(load_batch_id), -1) from ' ~ ledger)[0]) }}
{% endmacro %}
