{#
    on_schema_change 'fail' of the project's incremental materialization: the columns of the
    model's query against those of the model's table, by name and type, from one `describe
    query` of both side by side (Spark plans it and reads no data; a marker column between them
    says where the table's begin). Any difference stops the run with dbt's advice
    (--full-refresh): an insert would cast a changed type silently (binary into string).
#}
{% macro cdc_check_query_columns(relation, sql) %}
    {{ cdc_check_relation('cdc_check_query_columns', relation, 'the incremental model\'s table') }}
    {%- set marker = '__cdc_check_query_columns_table__' -%}
    {%- set query_columns, table_columns = {}, {} -%}
    {%- set side = namespace(columns=query_columns) -%}
    {%- set both -%}
        describe query select query_rows.*, true as {{ marker }}, table_rows.*
        from ({{ sql }}) as query_rows cross join {{ relation }} as table_rows
    {%- endset -%}
    {%- for row in run_query(both).rows -%}
        {%- if row[0] == marker -%}
            {%- set side.columns = table_columns -%}
        {%- else -%}
            {%- do side.columns.update({row[0]: row[1] | lower}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if query_columns != table_columns -%}
        {%- set differences = [] -%}
        {%- for name in ((query_columns.keys() | list) + (table_columns.keys() | list)) | unique | sort -%}
            {%- if query_columns.get(name) != table_columns.get(name) -%}
                {%- do differences.append(name ~ ': ' ~ (table_columns.get(name) or 'absent') ~ ' in the table, '
                    ~ (query_columns.get(name) or 'absent') ~ ' in the query') -%}
            {%- endif -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            'The columns of ' ~ relation ~ ' are not those its model now makes (on_schema_change: fail): '
            ~ differences | join('; ') ~ '. Rebuild it with `dbt build --full-refresh --select '
            ~ model.name ~ '`.') }}
    {%- endif -%}
{% endmacro %}
