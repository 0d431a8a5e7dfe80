{#
    dbt-spark's CREATE OR REPLACE VIEW (found first through the project's dispatch search
    order), with the view's fingerprint (cdc_view_fingerprint) among its properties, which the
    project's view materialization compares to leave an unchanged view as it is.
#}
{% macro spark__create_view_as(relation, sql) -%}
    create or replace view {{ relation }}
    {% if config.persist_column_docs() -%}
        (
        {{ get_persist_docs_column_list(model.columns, get_columns_in_query(sql)) }}
        )
    {% endif %}
    {{ comment_clause() }}
    {%- if config.get('contract').enforced -%}
        {{ get_assert_columns_equivalent(sql) }}
    {%- endif %}
    tblproperties ('cdc.view_fingerprint' = '{{ cdc_view_fingerprint(sql) }}')
    as
    {{ sql }}
{%- endmacro %}
