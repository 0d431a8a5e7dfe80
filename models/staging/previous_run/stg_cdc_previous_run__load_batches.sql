{{ config(materialized='ephemeral') }}
{#
    cdc_load_batches as the previous complete build left it. Every incremental model takes the
    batches above its newest one (macro cdc_batch_watermark, which reads the table at compile
    time); a ref to cdc_load_batches, built last, would be a cycle, so those models name this
    model instead (`-- depends_on:`) and the lineage shows what they read. Empty before the
    first build.
#}
{%- set stored = cdc_previous_run_relation('cdc_load_batches') -%}
{% if stored is not none %}
    select load_batch_id from {{ stored }}
{% else %}
    select cast(null as bigint) as load_batch_id
    where false
{% endif %}
