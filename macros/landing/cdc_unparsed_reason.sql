{#
    The reason of a message that did not parse. Spark parses JSON into a VARIANT of at most
    16 MiB, so a larger message is reported with its size: it may be valid JSON.
#}
{% macro cdc_unparsed_reason(message_text='message_text') %}
    {%- if message_text is not string or not message_text | trim -%}
        {{ cdc_argument_error('cdc_unparsed_reason', 'message_text', 'a SQL expression (non-empty string)', message_text) }}
    {%- endif -%}
    case
        when octet_length({{ message_text }}) > 16 * 1024 * 1024
            then concat(
                'not valid JSON, or larger than the 16 MiB Spark parses into a VARIANT (',
                octet_length({{ message_text }}), ' bytes)'
            )
        else 'not valid JSON'
    end
{% endmacro %}
