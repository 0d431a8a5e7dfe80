{#
    True when a variant is a JSON object; false for SQL null, JSON null and every other JSON
    type. Casting to an empty struct reads no field, where schema_of_variant would build the
    type of the whole value, for every image of every message.
#}
{% macro cdc_is_object(variant_expression) %}
    {%- if variant_expression is not string or not variant_expression | trim -%}
        {{ cdc_argument_error('cdc_is_object', 'variant_expression', 'a SQL expression (non-empty string)', variant_expression) }}
    {%- endif -%}
    (try_variant_get({{ variant_expression }}, '$', 'struct<>') is not null)
{% endmacro %}
