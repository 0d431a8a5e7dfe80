{# var cdc_key_change_chain_limit, checked: a whole number of at least 1. #}
{% macro cdc_key_change_chain_limit() %}
    {% set limit = var('cdc_key_change_chain_limit') %}
    {% if limit is not number or limit < 1 or limit != limit | int %}
        {{ exceptions.raise_compiler_error(
            'var cdc_key_change_chain_limit must be a whole number of at least 1, got ' ~ limit
        ) }}
    {% endif %}
    {{ return(limit | int) }}
{% endmacro %}
