{# The newest batch this run may take under var cdc_max_batches_per_run; none without a limit. #}
{% macro cdc_batch_ceiling(watermark) %}
    {%- if watermark is not number or watermark != watermark | int or watermark < -1 -%}
        {{ cdc_argument_error('cdc_batch_ceiling', 'watermark', 'a whole number of at least -1 (cdc_batch_watermark)', watermark) }}
    {%- endif -%}
    {%- set limit = var('cdc_max_batches_per_run', none) -%}
    {%- if limit is none or not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if limit is not number or limit < 1 or limit != limit | int -%}
        {{ exceptions.raise_compiler_error(
            "cdc_batch_ceiling: var cdc_max_batches_per_run must be a positive whole number, or null for no limit; got " ~ limit
        ) }}
    {%- endif -%}
    {%- set batches = cdc_landed_partitions() | map(attribute='load_batch_id') | select('gt', watermark) | unique | sort | list -%}
    {{ return(batches[limit - 1] if batches | length > limit else none) }}
{% endmacro %}
