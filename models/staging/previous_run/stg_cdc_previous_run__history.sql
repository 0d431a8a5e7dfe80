{{ config(materialized='ephemeral') }}
{#
    cdc_history as the previous run left it: int_cdc_touched_keys reads its current versions to
    find the keys a new truncate touches. A ref to cdc_history, built after it, would be a cycle,
    so it names this model (`-- depends_on:`) and the lineage shows what it reads. Empty before
    the first build.
#}
{%- set stored = cdc_previous_run_relation('cdc_history') -%}
{% if stored is not none %}
    select
        table_id,
        key_json,
        key_bucket,
        is_current
    from {{ stored }}
{% else %}
    select
        cast(null as string) as table_id,
        cast(null as string) as key_json,
        cast(null as bigint) as key_bucket,
        cast(null as boolean) as is_current
    where false
{% endif %}
