{#
    The formats of var cdc_formats that have landed anything (cdc_landed_partitions); with
    `above_watermark`, those that landed batches above the watermark (cdc_batch_watermark), the
    batches an incremental run parses. int_cdc_records_unioned unions only these: a format with
    nothing to parse adds nothing but a large query plan, and planning all nine formats costs
    seconds on every run. With `above_watermark` and no batch above it, every format that landed.
    At parse time, or when nothing landed, every format (so lineage always shows them all).
#}
{% macro cdc_landed_formats(above_watermark=false) %}
    {% if above_watermark is not boolean %}
        {{ cdc_argument_error('cdc_landed_formats', 'above_watermark', 'true or false', above_watermark) }}
    {% endif %}
    {% set all_formats = var('cdc_formats') | list %}
    {% if not execute %}
        {{ return(all_formats) }}
    {% endif %}
    {% set partitions = cdc_landed_partitions() %}
    {% set landed = all_formats | select('in', partitions | map(attribute='source_format') | list) | list %}
    {% if above_watermark %}
        {% set new = partitions | selectattr('load_batch_id', 'gt', cdc_batch_watermark()) | map(attribute='source_format') | list %}
        {% set landed = (landed | select('in', new) | list) or landed %}
    {% endif %}
    {{ return(landed if landed else all_formats) }}
{% endmacro %}
