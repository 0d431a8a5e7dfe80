{#
    The narrowest Spark type that holds every value of both types without loss, or none when
    there is none: a wider integer, float to double, an integer up to int (with a float or double) to double, decimals
    (and integers, as decimal(3..20,0)) to the decimal with the most integer digits and the
    largest scale (at most 38 digits), a date to a timestamp. As Delta's type widening, and no
    further: bigint to double loses digits, anything to string changes how the column compares.
#}
{% macro cdc_wider_type(left_type, right_type) %}
    {%- for argument, value in [('left_type', left_type), ('right_type', right_type)] -%}
        {%- if value is not string or not value | trim -%}
            {{ cdc_argument_error('cdc_wider_type', argument, 'a Spark type name', value) }}
        {%- endif -%}
    {%- endfor -%}
    {%- set left = left_type | lower | replace(' ', '') -%}
    {%- set right = right_type | lower | replace(' ', '') -%}
    {%- if left == right -%}
        {{ return(left) }}
    {%- endif -%}
    {%- set integer_digits = {'tinyint': 3, 'smallint': 5, 'int': 10, 'bigint': 20} -%}
    {%- set exact = {} -%}
    {%- for name, type in [('left', left), ('right', right)] -%}
        {%- set decimal = modules.re.match('^decimal[(]([0-9]+),([0-9]+)[)]$', type) -%}
        {%- if type in integer_digits -%}
            {%- do exact.update({name: [integer_digits[type], 0]}) -%}
        {%- elif decimal -%}
            {%- do exact.update({name: [decimal.group(1) | int, decimal.group(2) | int]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if left in integer_digits and right in integer_digits -%}
        {{ return(left if integer_digits[left] > integer_digits[right] else right) }}
    {%- elif exact | length == 2 -%}
        {%- set scale = [exact.left[1], exact.right[1]] | max -%}
        {%- set precision = [exact.left[0] - exact.left[1], exact.right[0] - exact.right[1]] | max + scale -%}
        {{ return('decimal(' ~ precision ~ ',' ~ scale ~ ')' if precision <= 38 else none) }}
    {%- endif -%}
    {%- set pair = [left, right] | sort -%}
    {%- set widenings = {
        'double,float': 'double', 'double,int': 'double', 'double,smallint': 'double', 'double,tinyint': 'double',
        'float,int': 'double', 'float,smallint': 'double', 'float,tinyint': 'double',
        'date,timestamp': 'timestamp', 'date,timestamp_ntz': 'timestamp_ntz',
    } -%}
    {{ return(widenings.get(pair | join(','))) }}
{% endmacro %}
