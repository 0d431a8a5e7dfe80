{#
    on_schema_change 'fail' of the project's incremental materialization: the columns of the
    model's query (`describe query`: Spark plans the query and reads no data) against those of
    the model's table, by name and type. Any difference stops the run with dbt's advice
    (--full-refresh): an insert would cast a changed type silently (binary into string).
#}
{% macro cdc_check_query_columns(relation, sql) %}
    {{ cdc_check_relation('cdc_check_query_columns', relation, 'the incremental model\'s table') }}
    {%- set query_columns = {} -%}
    {%- for row in run_query('describe query ' ~ sql).rows -%}
        {%- do query_columns.update({row[0]: row[1] | lower}) -%}
    {%- endfor -%}
    {%- set table_columns = {} -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- do table_columns.update({column.name: column.dtype | lower}) -%}
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
