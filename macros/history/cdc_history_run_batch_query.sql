{#
    The query of the newest batch this run processes, as column load_batch_id (-1 when none):
    closed versions the run writes go to its partition.
#}
{% macro cdc_history_run_batch_query(watermark) %}
    {% if watermark is not integer or watermark < 0 %}
        {{ cdc.cdc_argument_error('cdc_history_run_batch_query', 'watermark', 'a batch id (a whole number of at least 0)', watermark) }}
    {% endif %}
    {{ return('select coalesce(max(load_batch_id), -1) as load_batch_id from ' ~ ref('int_cdc_records')
        ~ ' where ' ~ cdc_new_batches(watermark)) }}
{% endmacro %}
