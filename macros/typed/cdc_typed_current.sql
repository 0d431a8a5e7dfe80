{# `<name>_current`: the live rows of one source table, one real typed column per source column. #}
{% macro cdc_typed_current(name) %}
    {%- if name is not string or not name | trim -%}
        {{ cdc_argument_error('cdc_typed_current', 'name', 'the name of a typed table in var cdc_typed_tables', name) }}
    {%- endif -%}
    {{ return(adapter.dispatch('cdc_typed_current', 'cdc')(name)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_typed_current(name) %}
    {{ cdc_unsupported_adapter('cdc_typed_current') }}
{% endmacro %}

{% macro spark__cdc_typed_current(name) %}
    {%- set spec = cdc_typed_table_spec(name) -%}
    select
        {%- for column_name, data_type in spec.columns %}
        {{ cdc_typed_column('row_columns', column_name, data_type) }},
        {%- endfor %}
        key_json,
        valid_from,
        valid_from_sequence,
        op
    from (
        select *, cast(row_image as map<string, variant>) as row_columns
        from {{ ref('cdc_current') }}
        where table_id = {{ cdc_string_literal(spec.table_id) }}
    ) as table_current
{% endmacro %}
