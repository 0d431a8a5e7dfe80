{#
    The landing batches a run started at `watermark` processes, sorted: those above it and,
    under var cdc_max_batches_per_run, only that many, oldest first (cdc_batch_ceiling). Read
    from the invocation's cdc_landed_partitions: no query.
#}
{% macro cdc_pending_batches(watermark) %}
    {%- if watermark is not number or watermark != watermark | int or watermark < -1 -%}
        {{ cdc_argument_error('cdc_pending_batches', 'watermark', 'a whole number of at least -1 (cdc_batch_watermark)', watermark) }}
    {%- endif -%}
    {%- set ceiling = cdc_batch_ceiling(watermark) -%}
    {%- set landed = cdc_landed_partitions() | map(attribute='load_batch_id') | select('gt', watermark) | unique | sort | list -%}
    {{ return(landed if ceiling is none else landed | select('le', ceiling) | list) }}
{% endmacro %}
