{#
    A whole number (as text) rendered so that string order is numeric order:
    zero-padded to `width` digits, negatives prefixed with '-' and digit-complemented
    ('-' sorts before every digit). Anything that is not a whole number gives null.
#}
{% macro cdc_sortable_number(expression, width=38) %}
    {% if width | int < 1 %}
        {{ exceptions.raise_compiler_error("cdc_sortable_number: width must be a positive number of digits") }}
    {% endif %}
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
