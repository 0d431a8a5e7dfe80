{#
    The watermark when this dbt invocation first read the landing (cdc_landed_partitions), before
    any of its models ran: in a build, the batches above it are the ones the build processes,
    also after it has moved the watermark by recording them. The current watermark when the
    landing table is missing.
#}
{% macro cdc_invocation_watermark() %}
    {% do cdc_landed_partitions() %}
    {% set memo = graph.get('cdc_landed_partitions ' ~ invocation_id) %}
    {{ return(cdc_batch_watermark() if memo is none else memo.watermark) }}
{% endmacro %}
