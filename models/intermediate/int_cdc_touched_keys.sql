{{ config(materialized='ephemeral') }}
-- depends_on: {{ ref('int_cdc_records') }}
-- depends_on: {{ ref('int_cdc_key_changes') }}
-- depends_on: {{ ref('stg_cdc_previous_run__load_batches') }}
-- depends_on: {{ ref('stg_cdc_previous_run__history') }}
{#
    The keys an incremental cdc_history run recomputes, each from its replay position
    (macro cdc_touched_keys_query). Ephemeral: cdc_history compiles the query into its own
    (its plan and the touched versions it caches), so no table is written for it.
#}
{{ cdc_touched_keys_query() }}
