{# The fingerprint stored with a seed's table by its last load, none without one. #}
{% macro cdc_seed_stored_fingerprint(relation) %}
    {{ cdc_check_relation('cdc_seed_stored_fingerprint', relation, 'the seed table') }}
    {%- set rows = run_query("show tblproperties " ~ relation ~ " ('cdc.seed_fingerprint')").rows -%}
    {#- a property the table lacks comes back as a row whose value says so -#}
    {%- if rows | length == 1 and rows[0][0] == 'cdc.seed_fingerprint' and ' ' not in rows[0][1] -%}
        {{ return(rows[0][1]) }}
    {%- endif -%}
    {{ return(none) }}
{% endmacro %}
