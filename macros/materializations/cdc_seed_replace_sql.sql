{#
    One statement that replaces the seed's table with its rows: each value as a string literal
    (or null) in an inline table, cast to the column's type (config column_types, else the
    type dbt infers from the file).
#}
{% macro cdc_seed_replace_sql(relation, agate_table, fingerprint) %}
    {%- set column_types = config.get('column_types', {}) -%}
    {%- set quote_columns = config.get('quote_columns', none) -%}
    {%- set properties = config.get('tblproperties', {}).copy() -%}
    {%- do properties.update({'cdc.seed_fingerprint': fingerprint}) -%}
    {%- set value_columns = [] -%}
    {%- set columns = [] -%}
    {%- for name in agate_table.column_names -%}
        {%- set type = column_types.get(name, adapter.convert_type(agate_table, loop.index0)) -%}
        {%- do value_columns.append('seed_value_' ~ loop.index) -%}
        {%- do columns.append('cast(' ~ value_columns[-1] ~ ' as ' ~ type ~ ') as '
            ~ adapter.quote_seed_column(name | string, quote_columns)) -%}
    {%- endfor -%}
    {%- set rows = [] -%}
    {%- for row in agate_table.rows -%}
        {%- set values = [] -%}
        {%- for value in row -%}
            {%- do values.append('null' if value is none else cdc_string_literal(value)) -%}
        {%- endfor -%}
        {%- do rows.append('(' ~ values | join(', ') ~ ')') -%}
    {%- endfor -%}
    create or replace table {{ relation }}
    {{ file_format_clause() }}
    tblproperties (
        {%- for key, value in properties.items() %}
            {{ cdc_string_literal(key) }} = {{ cdc_string_literal(value) }}{{ ',' if not loop.last }}
        {%- endfor %}
    )
    {{ comment_clause() }}
    as select {{ columns | join(', ') }}
    {%- if rows %}
        from values {{ rows | join(', ') }} as seed_rows ({{ value_columns | join(', ') }})
    {%- else %}
        from (select {% for column in value_columns %}null as {{ column }}{{ ', ' if not loop.last }}{% endfor %}) where false
    {%- endif %}
{% endmacro %}
