{#
    A Kafka Connect Decimal sent as bytes (JSON: base64 of the big-endian two's-complement
    unscaled value) with its scale, as a variant decimal: '/4U=' with scale 2 -> -1.23.
    Values of up to 16 bytes (38 digits) decode; anything else gives null.
#}
{% macro cdc_decimal_from_base64(base64_expression, scale_expression) %}
    {%- for argument, value in [('base64_expression', base64_expression), ('scale_expression', scale_expression)] -%}
        {%- if value is not string or not value | trim -%}
            {{ cdc_argument_error('cdc_decimal_from_base64', argument, 'a SQL expression (non-empty string)', value) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(adapter.dispatch('cdc_decimal_from_base64', 'cdc')(base64_expression, scale_expression)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_decimal_from_base64(base64_expression, scale_expression) %}
    {{ cdc_unsupported_adapter('cdc_decimal_from_base64') }}
{% endmacro %}

{% macro spark__cdc_decimal_from_base64(base64_expression, scale_expression) %}
    transform(
        array(named_struct(
            'hex_digits', hex(try_to_binary({{ base64_expression }}, 'base64')),
            'scale', {{ scale_expression }}
        )),
        raw -> transform(
            array(named_struct(
                'negative', substr(raw.hex_digits, 1, 1) >= '8',
                -- a negative value is -(not(bits) + 1): work on the complemented digits
                'magnitude_hex', if(
                    substr(raw.hex_digits, 1, 1) >= '8',
                    translate(raw.hex_digits, '0123456789ABCDEF', 'FEDCBA9876543210'),
                    raw.hex_digits
                ),
                'scale', raw.scale
            )),
            parts -> transform(
                array(named_struct(
                    'negative', parts.negative,
                    'digits', cast(try_add(
                        try_add(
                            try_multiply(
                                cast(conv(
                                    if(length(parts.magnitude_hex) > 16,
                                        substr(parts.magnitude_hex, 1, length(parts.magnitude_hex) - 16), '0'),
                                    16, 10
                                ) as decimal(38, 0)),
                                cast('18446744073709551616' as decimal(38, 0))
                            ),
                            cast(conv(right(parts.magnitude_hex, 16), 16, 10) as decimal(38, 0))
                        ),
                        if(parts.negative, 1, 0)
                    ) as string),
                    'scale', parts.scale
                )),
                value -> transform(
                    array(lpad(value.digits, greatest(length(value.digits), value.scale + 1), '0')),
                    padded -> case
                        when value.digits is not null and value.scale >= 0 then parse_json(concat(
                            if(value.negative, '-', ''),
                            substr(padded, 1, length(padded) - value.scale),
                            if(value.scale > 0, concat('.', right(padded, value.scale)), '')
                        ))
                    end
                )[0]
            )[0]
        )[0]
    )[0]
{% endmacro %}
