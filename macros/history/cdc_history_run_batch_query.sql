{# The newest batch this run processes: closed versions it writes go to its partition. #}
{% macro cdc_history_run_batch(watermark) %}
    {% if watermark is not integer or watermark < 0 %}
        {{ cdc.cdc_argument_error('cdc_history_run_batch', 'watermark', 'a batch id (a whole number of at least 0)', watermark) }}
    {% endif %}
    {{ return(cdc_integer_list(
        'select coalesce(max(load_batch_id), -1) from ' ~ ref('int_cdc_records')
        ~ ' where ' ~ cdc_new_batches(watermark)
    )[0]) }}
{% endmacro %}
