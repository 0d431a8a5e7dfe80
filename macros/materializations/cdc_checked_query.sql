{#
    on_schema_change 'fail' of the project's incremental materialization, inside the statement
    that writes: the model's query, its rows only when its columns are the table's, by name and
    type. The table joins the query as an empty relation, so that `typeof` knows both sides'
    columns; Spark folds the whole check into a constant while it plans, so a query whose
    columns match runs as it is (no scan of the table, no second analysis of the query, as a
    separate `describe query` cost), and one whose columns differ fails on its first row, before
    anything is written, naming each column that differs and the command that rebuilds the table
    (an insert would cast a changed type silently: binary into string). A query of no rows
    writes nothing and so is not stopped. Columns are compared by name, so an order changed by a
    new version of the model is no difference: each side's `struct<...>` is split into its
    fields (nested types up to four levels deep; a deeper one is compared as a whole, in order).
#}
{% macro cdc_checked_query(relation, sql) %}
    {{ cdc_check_relation('cdc_checked_query', relation, "the incremental model's table") }}
    {%- if sql is not string or not sql | trim -%}
        {{ cdc_argument_error('cdc_checked_query', 'sql', "the model's compiled query", sql) }}
    {%- endif -%}
    {%- set sides = {'query': 'typeof(struct(cdc_model_rows.*))', 'table': 'typeof(struct(cdc_table_rows.*))'} -%}
    {#- one field `name:type` of a struct's type: decimal(p,s) and nested <...> may hold commas -#}
    {%- set nested = namespace(pattern='[^<>]*') -%}
    {%- for _ in range(3) -%}
        {%- set nested.pattern = '(?:[^<>]|<' ~ nested.pattern ~ '>)*' -%}
    {%- endfor -%}
    {%- set field_pattern = cdc_string_literal('[^,<>(]+(?:[(][^()]*[)])?(?:<' ~ nested.pattern ~ '>)?') -%}
    {%- set fields, columns, split = {}, {}, [] -%}
    {%- for side, struct_type in sides.items() -%}
        {%- set inside = 'substr(' ~ struct_type ~ ', 8, length(' ~ struct_type ~ ') - 8)' -%}
        {%- do fields.update({side: 'regexp_extract_all(' ~ inside ~ ', ' ~ field_pattern ~ ', 0)'}) -%}
        {%- do split.append("concat_ws(',', " ~ fields[side] ~ ') = ' ~ inside) -%}
        {%- do columns.update({side: 'map_from_entries(transform(' ~ fields[side]
            ~ ", field -> struct(substring_index(field, ':', 1), substr(field, length(substring_index(field, ':', 1)) + 2))))"}) -%}
    {%- endfor -%}
    select cdc_model_rows.*
    from (
        {{ sql }}
    ) as cdc_model_rows
    left join (select * from {{ relation }} where false) as cdc_table_rows on false
    where
        case
            when {{ sides.query }} = {{ sides.table }} then true
            when {{ split | join(' and ') }} and array_sort({{ fields.query }}) = array_sort({{ fields.table }}) then true
            else raise_error(concat(
                {{ cdc_string_literal('The columns of ' ~ relation ~ ' are not those its model now makes (on_schema_change: fail): ') }},
                if(
                    {{ split | join(' and ') }},
                    element_at(transform(
                        array(named_struct('query', {{ columns.query }}, 'table', {{ columns.table }})),
                        both -> concat_ws('; ', transform(
                            filter(
                                array_sort(array_distinct(concat(map_keys(both.query), map_keys(both.table)))),
                                name -> not (both.query[name] <=> both.table[name])
                            ),
                            name -> concat(
                                name, ': ', coalesce(both.table[name], 'absent'), ' in the table, ',
                                coalesce(both.query[name], 'absent'), ' in the query'
                            )
                        ))
                    ), 1),
                    concat('the table has ', {{ sides.table }}, ', the query ', {{ sides.query }})
                ),
                {{ cdc_string_literal('. Rebuild it with `dbt build --full-refresh --select ' ~ model.name ~ '`.') }}
            ))
        end
{% endmacro %}
