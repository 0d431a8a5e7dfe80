{# A field that is present and not JSON null (`args`: a variant expression and a path). #}
{% macro datastream_field_is_present(args) %}
    {%- if args is not string or ',' not in args -%}
        {{ cdc_argument_error('datastream_field_is_present', 'args', "a variant expression and a JSON path, e.g. \"message, '$.object'\"", args) }}
    {%- endif -%}
    (try_variant_get({{ args }}) is not null and not is_variant_null(try_variant_get({{ args }})))
{% endmacro %}
