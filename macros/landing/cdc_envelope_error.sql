{#
    Why a message parsed with an envelope_schema (cdc_landed_messages) has no envelope: not
    JSON, or JSON that is not one object. try_parse_json, like from_json, reads the first
    value and ignores what follows: an object there means the text holds more than one
    value, which is not valid JSON either. Null when it has an envelope; the whole-message
    parse runs only for the messages that have none.
#}
{% macro cdc_envelope_error(envelope='envelope', message_text='message_text') %}
    {%- if envelope is not string or not envelope | trim -%}
        {{ cdc_argument_error('cdc_envelope_error', 'envelope', 'a SQL expression (non-empty string)', envelope) }}
    {%- endif -%}
    {%- if message_text is not string or not message_text | trim -%}
        {{ cdc_argument_error('cdc_envelope_error', 'message_text', 'a SQL expression (non-empty string)', message_text) }}
    {%- endif -%}
    case
        when {{ envelope }} is not null then null
        when try_parse_json({{ message_text }}) is null then {{ cdc_unparsed_reason(message_text) }}
        when {{ cdc_is_object('try_parse_json(' ~ message_text ~ ')') }} then 'not valid JSON'
        else 'message is not a JSON object'
    end
{% endmacro %}
