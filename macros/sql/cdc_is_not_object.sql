{#
    True when a variant is a JSON object; false for SQL null, JSON null and every other JSON
    type. Casting to an empty struct reads no field, where schema_of_variant would build the
    type of the whole value, for every image of every message.
#}
{% macro cdc_is_object(variant_expression) %}
    (try_variant_get({{ variant_expression }}, '$', 'struct<>') is not null)
{% endmacro %}

{# True when a variant is present, not JSON null, and not a JSON object: a malformed image. #}
{% macro cdc_is_not_object(variant_expression) %}
    ({{ variant_expression }} is not null
        and not is_variant_null({{ variant_expression }})
        and not {{ cdc_is_object(variant_expression) }})
{% endmacro %}
