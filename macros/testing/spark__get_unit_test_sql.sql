{#
    dbt unit tests fetch the actual and expected rows to compare them. A Spark Thrift
    Server cannot send VARIANT columns (our row images) to a client, so every column is
    compared as its string rendering (variant: its JSON text), on every target alike.
    Found by dbt through the `dispatch` search order in dbt_project.yml.
#}
{% macro spark__get_unit_test_sql(main_sql, expected_fixture_sql, expected_column_names) -%}
    {%- for argument, value in [('main_sql', main_sql), ('expected_fixture_sql', expected_fixture_sql)]
        if value is not string or not value | trim -%}
        {{ cdc_argument_error('spark__get_unit_test_sql', argument, 'a SQL query (non-empty string)', value) }}
    {%- endfor -%}
    {%- if expected_column_names is string or expected_column_names is mapping or expected_column_names is not iterable
        or expected_column_names | length == 0 -%}
        {{ cdc_argument_error('spark__get_unit_test_sql', 'expected_column_names', 'a non-empty list of column names', expected_column_names) }}
    {%- endif -%}
    {%- set compared_columns -%}
        {%- for column_name in expected_column_names -%}
            cast({{ column_name }} as string) as {{ column_name }}{% if not loop.last %}, {% endif %}
        {%- endfor -%}
    {%- endset -%}
    with dbt_internal_unit_test_actual as (
        select {{ compared_columns }}, {{ dbt.string_literal("actual") }} as {{ adapter.quote("actual_or_expected") }}
        from (
            {{ main_sql }}
        ) as _dbt_internal_unit_test_actual
    ),

    dbt_internal_unit_test_expected as (
        select {{ compared_columns }}, {{ dbt.string_literal("expected") }} as {{ adapter.quote("actual_or_expected") }}
        from (
            {{ expected_fixture_sql }}
        ) as _dbt_internal_unit_test_expected
    )

    select * from dbt_internal_unit_test_actual
    union all
    select * from dbt_internal_unit_test_expected
{%- endmacro %}
