{# True when a variant is present, not JSON null, and not a JSON object: a malformed image. #}
{% macro cdc_is_not_object(variant_expression) %}
    ({{ variant_expression }} is not null
        and not is_variant_null({{ variant_expression }})
        and schema_of_variant({{ variant_expression }}) not like 'OBJECT<%')
{% endmacro %}
