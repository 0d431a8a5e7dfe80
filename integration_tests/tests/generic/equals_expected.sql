{#
    The model's rows are exactly the rows of seed `expected` (as many of each), compared as text
    over the expected seed's columns (its empty cells as null). Fails with one row per difference: `missing` (expected, not
    produced) or `unexpected` (produced, not expected).
#}
{% test equals_expected(model, expected) %}
    {%- set columns = adapter.get_columns_in_relation(expected) | map(attribute='name') | list if execute else [] -%}
    {%- if execute and not columns -%}
        {{ exceptions.raise_compiler_error('equals_expected: argument expected has no columns (not seeded?): ' ~ expected) }}
    {%- endif -%}
    {%- set as_text -%}
        {%- for column in columns -%}
            cast({{ column }} as string) as {{ column }}{{ ', ' if not loop.last }}
        {%- endfor -%}
    {%- endset -%}
    {#- empty cells of the seed as null (seed_text) -#}
    {%- set seed_as_text -%}
        {%- for column in columns -%}
            {{ seed_text(column) }} as {{ column }}{{ ', ' if not loop.last }}
        {%- endfor -%}
    {%- endset -%}
    with actual as (
        select {{ as_text or '*' }} from {{ model }}
    ),

    expected as (
        select {{ seed_as_text or '*' }} from {{ expected }}
    ),

    missing as (
        select * from expected
        except all
        select * from actual
    ),

    unexpected as (
        select * from actual
        except all
        select * from expected
    )

    select
        'missing' as problem,
        *
    from missing
    union all
    select
        'unexpected' as problem,
        *
    from unexpected
{% endtest %}
