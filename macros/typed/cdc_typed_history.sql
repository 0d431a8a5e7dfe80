{#
    `<name>_history`: cdc_history of one source table with one real column per source
    column, cast to its type, plus the SCD2 columns. A column added later in the stream
    is null in the versions before it existed.
#}
{% macro cdc_typed_history(name) %}
    {%- if name is not string or not name | trim -%}
        {{ cdc_argument_error('cdc_typed_history', 'name', 'the name of a typed table in var cdc_typed_tables', name) }}
    {%- endif -%}
    {#- which source table the model holds, for its data tests' scope (cdc_run_scope_where) -#}
    {%- do config(meta={'cdc_typed_table': name}) -%}
    {{ return(adapter.dispatch('cdc_typed_history', 'cdc')(name)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_typed_history(name) %}
    {{ cdc_unsupported_adapter('cdc_typed_history') }}
{% endmacro %}

{% macro spark__cdc_typed_history(name) %}
    {%- set spec = cdc_typed_table_spec(name) -%}
    select
        {%- for column_name, data_type in spec.columns %}
        {{ cdc_typed_column('row_columns', column_name, data_type) }},
        {%- endfor %}
        {{ cdc_typed_scd_columns() | join(',\n        ') }}
    from (
        select *, cast(row_image as map<string, variant>) as row_columns
        from {{ ref('cdc_history') }}
        where table_id = {{ cdc_string_literal(spec.table_id) }}
    ) as table_history
{% endmacro %}
