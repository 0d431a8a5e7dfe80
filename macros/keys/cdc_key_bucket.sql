{# Stable partition number of a row key: incremental runs rewrite only the buckets they touch. #}
{% macro cdc_key_bucket(table_id, key_json) %}
    {%- if table_id is not string or not table_id | trim -%}
        {{ cdc_argument_error('cdc_key_bucket', 'table_id', 'a SQL expression (non-empty string)', table_id) }}
    {%- endif -%}
    {%- if key_json is not string or not key_json | trim -%}
        {{ cdc_argument_error('cdc_key_bucket', 'key_json', 'a SQL expression (non-empty string)', key_json) }}
    {%- endif -%}
    {%- set buckets = var('cdc_key_buckets') | int -%}
    {%- if buckets < 1 -%}
        {{ exceptions.raise_compiler_error("cdc_key_bucket: var cdc_key_buckets must be a positive whole number; got " ~ var('cdc_key_buckets')) }}
    {%- endif -%}
    {#- one bucket: no hash to compute per record -#}
    {{- 'cast(0 as bigint)' if buckets == 1 else 'pmod(xxhash64(' ~ table_id ~ ', ' ~ key_json ~ '), ' ~ buckets ~ ')' -}}
{% endmacro %}
