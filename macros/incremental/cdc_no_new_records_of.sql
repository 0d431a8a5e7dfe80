{#
    Whether this run's new batches hold no record of `record_kinds` (a model's config
    cdc_record_kinds), so that the model writes nothing (the incremental materialization) and
    its data tests check nothing (cdc_run_scope_where). False on a first or full build. A kind
    must be one int_cdc_records holds (cdc_record_kinds): a misspelt one would skip the model
    for ever.
#}
{% macro cdc_no_new_records_of(record_kinds) %}
    {%- set known_kinds = cdc_record_kinds() -%}
    {%- if record_kinds is string or record_kinds is mapping or not record_kinds
        or record_kinds | reject('in', known_kinds) | list -%}
        {{ cdc_argument_error('cdc_no_new_records_of', 'record_kinds (config cdc_record_kinds)',
            'a non-empty list of record kinds among ' ~ known_kinds | join(', '), record_kinds) }}
    {%- endif -%}
    {%- set watermark = cdc_batch_watermark() -%}
    {%- if watermark < 0 -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(not (record_kinds | select('in', cdc_new_records_summary(watermark).records_by_kind) | list)) }}
{% endmacro %}
