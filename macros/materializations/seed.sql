{#
    Seeds on Spark, replacing dbt's default (which drops the table, creates it and inserts the
    rows on every `dbt build`):
      - a seed whose file and table settings are those of its last load is not loaded again:
        the table keeps its rows and its Delta version, and the node costs one metadata read
        (the fingerprint stored in the table's properties), not a drop, a create and an insert;
        a data test that passed on those rows (the test materialization marks it in the
        table's properties) sends no query either (where: __cdc_run_wrote__);
      - a seed that changed is replaced in one statement (CREATE OR REPLACE ... AS SELECT from
        its rows): one Delta commit, so a reader sees the old rows or the new ones, never a
        missing or empty table, and the table's history is kept (RESTORE reaches it).
    `--full-refresh` loads every seed again.
#}
{% materialization seed, adapter='spark' %}
    {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
    {%- if old_relation is not none and old_relation.is_view -%}
        {{ exceptions.raise_compiler_error("Cannot seed to '" ~ old_relation.render() ~ "': it is a view") }}
    {%- endif -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set agate_table = load_agate_table() -%}
    {%- do store_result('agate_table', response='OK', agate_table=agate_table) -%}
    {%- set fingerprint = cdc_seed_fingerprint(model) -%}
    {%- set stored = cdc_seed_stored_marks(old_relation) if old_relation is not none and not should_full_refresh()
        else {'fingerprint': none, 'tested': {}} -%}
    {%- set unchanged = stored.fingerprint == fingerprint -%}
    {#- its data tests (where: __cdc_run_wrote__) send no query for rows they passed on -#}
    {%- do cdc_seed_states().update({model.unique_id: {
        'relation': target_relation | string, 'fingerprint': fingerprint, 'unchanged': unchanged,
        'tested': stored.tested if unchanged else {}}}) -%}

    {{ run_hooks(pre_hooks) }}

    {% if unchanged %}
        {% call noop_statement('main', 'UNCHANGED', 'UNCHANGED', 0) %}
            -- {{ target_relation }} holds this seed as loaded before (fingerprint {{ fingerprint }})
        {% endcall %}
    {% else %}
        {% set replace_sql = cdc_seed_replace_sql(target_relation, agate_table, fingerprint) %}
        {% call statement('load_seed') %}{{ replace_sql }}{% endcall %}
        {#- reported as dbt reports a seed load: the rows inserted -#}
        {% set rows = agate_table.rows | length %}
        {% call noop_statement('main', 'INSERT ' ~ rows, 'INSERT', rows) %}{{ replace_sql }}{% endcall %}
    {% endif %}

    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
