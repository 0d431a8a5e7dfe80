{# Stable partition number of a row key: incremental runs rewrite only the buckets they touch. #}
{% macro cdc_key_bucket(table_id, key_json) %}
    {%- set buckets = var('cdc_key_buckets') | int -%}
    {%- if buckets < 1 -%}
        {{ exceptions.raise_compiler_error("var cdc_key_buckets must be a positive whole number") }}
    {%- endif -%}
    pmod(xxhash64({{ table_id }}, {{ key_json }}), {{ buckets }})
{% endmacro %}
