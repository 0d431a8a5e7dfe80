{#
    Text that spells a number (optional '-', digits, optional fraction and exponent; spaces
    around it allowed) -> that JSON number as a variant (integer or exact decimal; a double
    beyond 38 digits or with an exponent); anything else -> null. Leading zeros are dropped
    first, because JSON refuses them and vendors write them (MySQL ZEROFILL columns: '00042').
    One rule for every vendor that renders numbers as text.
#}
{% macro cdc_json_number(text) %}
    {%- if text is not string or not text | trim -%}
        {{ cdc_argument_error('cdc_json_number', 'text', 'a SQL expression (non-empty string)', text) }}
    {%- endif -%}
    case
        when trim({{ text }}) rlike '^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$'
            then try_parse_json(regexp_replace(trim({{ text }}), '^(-?)0+([0-9])', '$1$2'))
    end
{% endmacro %}
