{# True when a variant is present, not JSON null, and not a JSON object: a malformed image. #}
{% macro cdc_is_not_object(variant_expression) %}
    {%- if variant_expression is not string or not variant_expression | trim -%}
        {{ cdc_argument_error('cdc_is_not_object', 'variant_expression', 'a SQL expression (non-empty string)', variant_expression) }}
    {%- endif -%}
    ({{ variant_expression }} is not null
        and not is_variant_null({{ variant_expression }})
        and not {{ cdc_is_object(variant_expression) }})
{% endmacro %}
