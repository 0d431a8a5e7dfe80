{#
    The condition on `column` that selects the landing batches this run processes: those
    above the watermark and, when var cdc_max_batches_per_run is set, only that many of them,
    oldest first, so that a large backlog is worked through in runs of bounded size. `true`
    when every batch is taken (no literal -1: Hive's partition filter cannot take it); `false`
    when the landing holds no batch to take (cdc_pending_batches): Spark then plans each
    model's reads as empty and scans nothing, where a filter on batches would still scan
    what it joins them to (the current versions, for a truncate).
#}
{% macro cdc_new_batches(watermark, column='load_batch_id') %}
    {%- if watermark is not number or watermark != watermark | int or watermark < -1 -%}
        {{ cdc_argument_error('cdc_new_batches', 'watermark', 'a whole number of at least -1 (cdc_batch_watermark)', watermark) }}
    {%- endif -%}
    {%- if column is not string or not column | trim -%}
        {{ cdc_argument_error('cdc_new_batches', 'column', 'a column name or SQL expression (non-empty string)', column) }}
    {%- endif -%}
    {%- if execute and watermark >= 0 and not cdc_pending_batches(watermark) -%}
        {{ return('false') }}
    {%- endif -%}
    {%- set ceiling = cdc_batch_ceiling(watermark) -%}
    {%- set conditions = [] -%}
    {%- if watermark >= 0 -%}
        {%- do conditions.append(column ~ ' > ' ~ watermark) -%}
    {%- endif -%}
    {%- if ceiling is not none -%}
        {%- do conditions.append(column ~ ' <= ' ~ ceiling) -%}
    {%- endif -%}
    {{- '(' ~ conditions | join(' and ') ~ ')' if conditions else 'true' -}}
{% endmacro %}
