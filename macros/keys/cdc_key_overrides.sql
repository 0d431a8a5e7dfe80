{#
    Key overrides of the typed tables (var cdc_typed_tables, `key_columns`) as an inline
    table (table_id, key_columns): they win over the key a message declares.
#}
{% macro cdc_key_overrides() %}
    {%- set overrides = [] -%}
    {%- for name, spec in (var('cdc_typed_tables', none) or {}).items() if spec.get('key_columns') -%}
        {%- if spec.key_columns is string -%}
            {{ exceptions.raise_compiler_error("cdc_key_overrides: cdc_typed_tables." ~ name ~ ".key_columns must be a list of column names; got '" ~ spec.key_columns ~ "'") }}
        {%- endif -%}
        {%- do overrides.append((spec.table_id, spec.key_columns)) -%}
    {%- endfor -%}
    {%- if overrides | length == 0 -%}
        select cast(null as string) as table_id, cast(null as array<string>) as key_columns where false
    {%- else -%}
        select * from values
        {%- for table_id, key_columns in overrides %}
            ({{ cdc_string_literal(table_id) }}, array({{ cdc_string_list(key_columns) }}))
            {%- if not loop.last %},{% endif %}
        {%- endfor %}
        as key_overrides (table_id, key_columns)
    {%- endif -%}
{% endmacro %}
