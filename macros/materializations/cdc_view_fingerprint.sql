{#
    What a view is made from, as an MD5: its compiled query and the way this project writes
    views (spark__create_view_as). Stored as view property `cdc.view_fingerprint`; the view
    materialization leaves a view whose stored fingerprint is the one it would write.
#}
{% macro cdc_view_fingerprint(sql) %}
    {%- if sql is not string -%}
        {{ cdc_argument_error('cdc_view_fingerprint', 'sql', "a view's compiled query", sql) }}
    {%- endif -%}
    {#- bump the version when spark__create_view_as writes views differently -#}
    {{ return(local_md5('cdc view v1\n' ~ sql)) }}
{% endmacro %}
