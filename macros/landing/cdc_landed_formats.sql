{#
    The formats of var cdc_formats that have landed anything (cdc_landed_partitions).
    int_cdc_records_unioned unions only these: a format that never landed adds nothing but
    a large query plan, and planning all nine formats costs seconds on every run. At parse
    time, when the landing table is missing or empty, every format (so lineage always shows
    them all).
#}
{% macro cdc_landed_formats() %}
    {% set all_formats = var('cdc_formats') | list %}
    {% if not execute %}
        {{ return(all_formats) }}
    {% endif %}
    {% set landed = cdc_landed_partitions() | map(attribute='source_format') | list %}
    {% set formats = all_formats | select('in', landed) | list %}
    {{ return(formats if formats else all_formats) }}
{% endmacro %}
