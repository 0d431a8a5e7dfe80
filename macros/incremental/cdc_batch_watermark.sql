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
    {% set ledger = adapter.get_relation(database=none, schema=target.schema, identifier='cdc_load_batches') %}
    {% if ledger is none %}
        {{ return(-1) }}
    {% endif %}
    {{ return(cdc_integer_list('select coalesce(max(load_batch_id), -1) from ' ~ ledger)[0]) }}
{% endmacro %}

{#
    The condition on `column` that selects the landing batches this run processes: those
    above the watermark and, when var cdc_max_batches_per_run is set, only that many of them,
    oldest first, so that a large backlog is worked through in runs of bounded size. `true`
    when every batch is taken (no literal -1: Hive's partition filter cannot take it).
#}
{% macro cdc_new_batches(watermark, column='load_batch_id') %}
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

{# The newest batch this run may take under var cdc_max_batches_per_run; none without a limit. #}
{% macro cdc_batch_ceiling(watermark) %}
    {%- set limit = var('cdc_max_batches_per_run', none) -%}
    {%- if limit is none or not execute -%}
        {{ return(none) }}
    {%- endif -%}
    {%- if limit is not number or limit < 1 or limit != limit | int -%}
        {{ exceptions.raise_compiler_error(
            "var cdc_max_batches_per_run must be a positive whole number, or null for no limit; got " ~ limit
        ) }}
    {%- endif -%}
    {%- set batches = cdc_landed_partitions() | map(attribute='load_batch_id') | select('gt', watermark) | unique | sort | list -%}
    {{ return(batches[limit - 1] if batches | length > limit else none) }}
{% endmacro %}
