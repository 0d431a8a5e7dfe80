{# `<name>_current`: the live rows of one source table, one real typed column per source column. #}
{% macro cdc_typed_current(name) %}
    {{ return(adapter.dispatch('cdc_typed_current', 'cdc')(name)) }}
{% endmacro %}

{% macro default__cdc_typed_current(name) %}
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
