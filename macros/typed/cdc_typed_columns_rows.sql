{#
    The rows of `columns_relation` (cdc_typed_columns) for source table `table_id`: lists of
    source_column, source_format, declared_type, value_type, first_sequence, last_sequence.
    One query per dbt invocation reads them for every table of var cdc_typed_tables, kept in
    its state (cdc_invocation_state): a typed model no longer costs a query of its own. The typed models run after
    cdc_typed_columns (they ref it), so the rows are those this build wrote.
#}
{% macro cdc_typed_columns_rows(columns_relation, table_id) %}
    {{ cdc_check_relation('cdc_typed_columns_rows', columns_relation, 'cdc_typed_columns') }}
    {%- if table_id is not string or not table_id -%}
        {{ cdc_argument_error('cdc_typed_columns_rows', 'table_id', 'a table_id (string)', table_id) }}
    {%- endif -%}
    {%- set table_ids = [] -%}
    {%- for spec in (var('cdc_typed_tables', none) or {}).values() if spec.table_id is defined and spec.table_id -%}
        {%- do table_ids.append(spec.table_id) -%}
    {%- endfor -%}
    {%- if table_id not in table_ids -%}
        {%- do table_ids.append(table_id) -%}
    {%- endif -%}
    {%- set memo = cdc_invocation_state('cdc_typed_columns_rows', {}) -%}
    {%- if table_id not in memo -%}
        {%- for name in table_ids -%}
            {%- do memo.update({name: []}) -%}
        {%- endfor -%}
        {%- set literals = [] -%}
        {%- for name in table_ids | unique -%}
            {%- do literals.append(cdc_string_literal(name)) -%}
        {%- endfor -%}
        {%- set result = run_query(
            'select table_id, source_column, source_format, declared_type, value_type, first_sequence, last_sequence from '
            ~ columns_relation ~ ' where table_id in (' ~ literals | join(', ') ~ ')') -%}
        {%- for row in result.rows -%}
            {%- do memo[row[0]].append(row.values()[1:]) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(memo[table_id]) }}
{% endmacro %}
