{#
    The value at `path` of the variant `value` when it is a JSON string, else null: a cast to
    string would turn an object or a number into its JSON text (a table named `{"a":1}`).
#}
{% macro cdc_json_string(value, path) %}
    {%- if value is not string or not value | trim -%}
        {{ cdc_argument_error('cdc_json_string', 'value', 'a SQL expression (non-empty string)', value) }}
    {%- endif -%}
    {%- if not (path is string and path.startswith('$')) -%}
        {{ cdc_argument_error('cdc_json_string', 'path', "a JSON path starting with '$'", path) }}
    {%- endif -%}
    if(
        schema_of_variant(try_variant_get({{ value }}, '{{ path }}')) = 'STRING',
        try_variant_get({{ value }}, '{{ path }}', 'string'),
        null
    )
{% endmacro %}
