{#
    The per-format settings of var cdc_formats as an inline table, so that SQL can
    join them: source_format, row_locator_columns (array<string>).
#}
{% macro cdc_format_settings() %}
    {%- set formats = var('cdc_formats') -%}
    {%- if formats is not mapping or formats | length == 0 -%}
        {{ exceptions.raise_compiler_error("cdc_format_settings: var cdc_formats must map each format name to its settings; got " ~ formats) }}
    {%- endif -%}
    select * from values
    {%- for name, settings in formats.items() %}
        {%- set locators = settings.get('row_locator_columns', []) %}
        ({{ cdc_string_literal(name) }}, array({{ cdc_string_list(locators) if locators else '' }}))
        {%- if not loop.last %},{% endif %}
    {%- endfor %}
    as format_settings (source_format, row_locator_columns)
{% endmacro %}
