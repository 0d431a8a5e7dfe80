{#
    The op facts of one format (var cdc_formats, `<format>.ops`) that its flattening macro
    renders into SQL at compile time: which image an op's row fills, op ranks, the op names
    the macro gives messages without a vendor op. A compile error names each required key
    the var lacks.
#}
{% macro cdc_format_ops(source_format, required) %}
    {%- set formats = var('cdc_formats') -%}
    {%- if source_format is not string or source_format not in formats -%}
        {{ cdc_argument_error('cdc_format_ops', 'source_format', 'a format declared in var cdc_formats (dbt_project.yml)', source_format) }}
    {%- endif -%}
    {%- if required is string or required is mapping or required is not iterable -%}
        {{ cdc_argument_error('cdc_format_ops', 'required', 'a list of keys of var cdc_formats.' ~ source_format ~ '.ops', required) }}
    {%- endif -%}
    {%- set ops = formats[source_format].get('ops') -%}
    {%- if ops is not mapping -%}
        {{ exceptions.raise_compiler_error(
            "cdc_format_ops: var cdc_formats." ~ source_format ~ ".ops must map op facts (" ~ required | join(', ')
            ~ ") to vendor op names; got " ~ ops) }}
    {%- endif -%}
    {%- for key in required if key not in ops -%}
        {{ exceptions.raise_compiler_error(
            "cdc_format_ops: var cdc_formats." ~ source_format ~ ".ops has no `" ~ key ~ "` (needs: "
            ~ required | join(', ') ~ "; see the comments of var cdc_formats in dbt_project.yml)") }}
    {%- endfor -%}
    {{ return(ops) }}
{% endmacro %}
