{# The fingerprint stored with a seed's table by its last load, none without one. #}
{% macro cdc_seed_stored_fingerprint(relation) %}
    {{ cdc_check_relation('cdc_seed_stored_fingerprint', relation, 'the seed table') }}
    {#- all its properties: asked for one by name, Spark answers a missing one with a row saying so -#}
    {%- for row in run_query('show tblproperties ' ~ relation).rows if row[0] == 'cdc.seed_fingerprint' -%}
        {{ return(row[1]) }}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}
