{#-
    None of `columns` is null in any row: one scan for all of a model's required columns,
    where a not_null test per column would scan once each. Returns the offending rows, with
    the names of their null columns.
-#}
{% test not_null_columns(model, columns) %}
    {% if columns is string or columns | length == 0 %}
        {{ exceptions.raise_compiler_error(
            "not_null_columns: `columns` must be a non-empty list of column names; got " ~ columns) }}
    {% endif %}
    {%- set quoted = [] -%}
    {%- for column in columns -%}{%- do quoted.append(cdc_quote_identifier(column)) -%}{%- endfor %}
    select *
    from (
        select
            concat_ws(', ', {% for column in quoted -%}
                if({{ column }} is null, {{ cdc_string_literal(columns[loop.index0]) }}, null)
                {%- if not loop.last %}, {% endif %}
            {%- endfor %}) as null_columns,
            {{ quoted | join(', ') }}
        from {{ model }}
    ) as checked
    where null_columns != ''
{% endtest %}
