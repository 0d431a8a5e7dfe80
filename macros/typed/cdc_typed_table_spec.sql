{#
    The configuration of one typed table (var cdc_typed_tables): its source table_id,
    optional key_columns override, and its columns as (name, spark type) pairs, taken
    from the model's YAML (`data_type` of each column, as scripts/scaffold_typed_table.py
    writes it) or, when the YAML lists none, discovered from the variant types of the
    rows built so far.
#}
{% macro cdc_typed_table_spec(name) %}
    {%- if name is not string or not name | trim -%}
        {{ cdc_argument_error('cdc_typed_table_spec', 'name', 'the name of a typed table in var cdc_typed_tables', name) }}
    {%- endif -%}
    {%- set tables = (var('cdc_typed_tables', none) or {}) -%}
    {%- if name not in tables -%}
        {{ exceptions.raise_compiler_error(
            "cdc_typed_table_spec: '" ~ name ~ "' is not in var cdc_typed_tables (dbt_project.yml); "
            ~ "add `" ~ name ~ ": {table_id: <database.table>}` there or run scripts/scaffold_typed_table.py") }}
    {%- endif -%}
    {%- set spec = tables[name] -%}
    {%- if spec.table_id is not defined or not spec.table_id -%}
        {{ exceptions.raise_compiler_error("cdc_typed_tables." ~ name ~ ": table_id is required") }}
    {%- endif -%}
    {%- set row_columns = [] -%}
    {%- set scd_columns = cdc_typed_scd_columns() -%}
    {%- for column in model.columns.values() if column.name not in scd_columns -%}
        {%- if not column.data_type -%}
            {{ exceptions.raise_compiler_error(
                "typed table " ~ name ~ ": column '" ~ column.name ~ "' needs a data_type in its YAML") }}
        {%- endif -%}
        {%- do row_columns.append((column.name, column.data_type)) -%}
    {%- endfor -%}
    {%- if row_columns | length == 0 and execute -%}
        {%- set discovered = run_query(
            "select column_name, schema_of_variant_agg(column_value) from "
            ~ ref('cdc_history') ~ " lateral view explode(cast(row_image as map<string, variant>)) "
            ~ "as column_name, column_value where table_id = " ~ cdc_string_literal(spec.table_id)
            ~ " group by column_name order by column_name") -%}
        {%- for row in discovered.rows -%}
            {%- do row_columns.append((row[0], row[1] | lower)) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return({'table_id': spec.table_id, 'key_columns': spec.get('key_columns'), 'columns': row_columns}) }}
{% endmacro %}
