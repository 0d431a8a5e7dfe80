{#
    The compile error of a macro argument that is not what the macro takes: names the macro,
    the argument, what it must be and the value received. Every macro checks its arguments
    first and calls this on the first one that is wrong.
#}
{% macro cdc_argument_error(macro_name, argument, expected, value) %}
    {%- set received = "'" ~ value ~ "'" if value is string else value | string -%}
    {{ exceptions.raise_compiler_error(
        macro_name ~ ": argument `" ~ argument ~ "` must be " ~ expected ~ "; got " ~ received) }}
{% endmacro %}
