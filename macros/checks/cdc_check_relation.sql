{#
    The check of a macro's relation argument, which several macros take first: a compile error
    (cdc_argument_error) when it is missing or an empty name.
#}
{% macro cdc_check_relation(macro_name, relation, expected) %}
    {%- if relation is none or (relation is string and not relation | trim) -%}
        {{ cdc_argument_error(macro_name, 'relation', expected, relation) }}
    {%- endif -%}
{% endmacro %}
