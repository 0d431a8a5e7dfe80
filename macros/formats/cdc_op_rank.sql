{#
    The rank of an op at one position (var cdc_formats, `<format>.ops.op_ranks`: op -> rank,
    '*' every other op), as a one-character string for sequence_key:
    case <op> when 'INSERT' then '1' when 'UPDATE' then '2' else '3' end.
#}
{% macro cdc_op_rank(op_expression, op_ranks) %}
    {%- if op_expression is not string or not op_expression | trim -%}
        {{ cdc_argument_error('cdc_op_rank', 'op_expression', 'a SQL expression (non-empty string)', op_expression) }}
    {%- endif -%}
    {%- if op_ranks is not mapping or '*' not in op_ranks
        or op_ranks.values() | map('string') | select('in', ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) | list | length != op_ranks | length -%}
        {{ cdc_argument_error('cdc_op_rank', 'op_ranks', "a mapping of op -> rank (one digit), with '*' for every other op", op_ranks) }}
    {%- endif -%}
    case {{ op_expression }}
    {%- for op, rank in op_ranks.items() if op != '*' %} when {{ cdc_string_literal(op) }} then '{{ rank }}'{% endfor %}
    else '{{ op_ranks['*'] }}' end
{%- endmacro %}
