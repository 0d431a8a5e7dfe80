{#
    Views on Spark, in place of dbt's default (CREATE OR REPLACE VIEW on every run): a view is
    created with its fingerprint (cdc_view_fingerprint) among its properties, and a view whose
    stored fingerprint is the one it would be created with now is left as it is. The stored one
    is read from what dbt already knows of the relation (Spark's `show table extended` at the
    start of a run lists a view's properties), so an unchanged view costs no statement.
    `--full-refresh` creates every view again. Grants and hooks run as in dbt's.
#}
{% materialization view, adapter='spark' -%}
    {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
    {%- set fingerprint = cdc_view_fingerprint(sql) -%}
    {%- set unchanged = old_relation is not none and old_relation.is_view and not should_full_refresh()
        and ('cdc.view_fingerprint=' ~ fingerprint) in (old_relation.information or '') -%}
    {%- if not unchanged -%}
        {{ return(dbt.create_or_replace_view()) }}
    {%- endif -%}
    {{ run_hooks(pre_hooks) }}
    {% call noop_statement('main', 'UNCHANGED', 'UNCHANGED', 0) %}
        -- {{ old_relation }} is this view as created before (fingerprint {{ fingerprint }})
    {% endcall %}
    {% do apply_grants(old_relation, config.get('grants'), should_revoke=true) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [old_relation]}) }}
{%- endmaterialization %}
