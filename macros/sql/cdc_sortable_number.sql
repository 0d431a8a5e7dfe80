{#
    A whole number (as text) rendered so that string order is numeric order:
    zero-padded to `width` digits, negatives prefixed with '-' and digit-complemented
    ('-' sorts before every digit). Anything that is not a whole number gives null.
#}
{% macro cdc_sortable_number(expression, width=38) %}
    {%- if expression is not string or not expression | trim -%}
        {{ cdc_argument_error('cdc_sortable_number', 'expression', 'a SQL expression (non-empty string)', expression) }}
    {%- endif -%}
    {%- if width is not number or width != width | int or width < 1 -%}
        {{ cdc_argument_error('cdc_sortable_number', 'width', 'a positive whole number of digits', width) }}
    {%- endif -%}
    case
        when trim({{ expression }}) rlike '^[0-9]{1,{{ width }}}$'
            then lpad(trim({{ expression }}), {{ width }}, '0')
        when trim({{ expression }}) rlike '^-[0-9]{1,{{ width }}}$'
            then concat(
                '-',
                translate(lpad(substr(trim({{ expression }}), 2), {{ width }}, '0'), '0123456789', '9876543210')
            )
    end
{% endmacro %}
