{#
    Incremental models on Spark, in place of dbt-spark's (same configs, same tables). An
    incremental run of dbt-spark's costs per model, beside its write: a `set` of the partition
    overwrite mode, a temporary view of the model's query, and a `describe extended` of the
    target (three with on_schema_change). Here:
      - insert_overwrite is one statement, `insert overwrite ... by name` from the model's query
        (Spark matches the columns by name: no describe for the column list), with the dynamic
        partition overwrite mode as the statement's option (WITH ('partitionOverwriteMode' =
        'dynamic'): only the partitions its rows fall in are replaced, whatever the session's
        mode, where dbt-spark sends a `set` of it before each model);
      - merge reads the model's query as a subquery, not a temporary view;
      - a model with config cdc_record_kinds (a list of int_cdc_records' record kinds) sends
        nothing when the run's new batches hold no record of those kinds
        (cdc_new_records_summary, one query a build for every model that asks), as
        dbt-databricks' skip_merge_on_empty_source skips a MERGE of nothing; nor does a model
        that noted, compiling, that its query is empty (cdc_models_writing_nothing);
      - on_schema_change 'fail' compares the query's columns with the target's inside the
        statement that writes (cdc_checked_query): no statement of its own, where dbt-spark's
        check creates a view and describes it and the target.
    Other strategies and options (append, microbatch, python models, schema changes other than
    ignore and fail) are dbt-spark's materialization's.
#}
{% materialization incremental, adapter='spark', supported_languages=['sql', 'python'] -%}
    {%- set strategy = config.get('incremental_strategy') or 'append' -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
    {%- set existing_relation = load_relation(this) -%}
    {%- set lean = model['language'] == 'sql' and strategy in ['insert_overwrite', 'merge']
        and on_schema_change in ['ignore', 'fail']
        and existing_relation is not none and not existing_relation.is_view and not should_full_refresh() -%}
    {%- if not lean -%}
        {{ return(dbt.materialization_incremental_spark()) }}
    {%- endif -%}
    {%- set partition_by = config.get('partition_by', none) -%}
    {%- set partition_by = [partition_by] if partition_by is string else partition_by -%}
    {%- set target_relation = this -%}

    {#- a model of records of some kinds writes nothing when the new batches hold none of them;
        another may have found, compiling, that its query is empty (cdc_models_writing_nothing) -#}
    {%- set record_kinds = config.get('cdc_record_kinds', none) -%}
    {%- if record_kinds is not none and cdc_no_new_records_of(record_kinds) -%}
        {%- do cdc_models_writing_nothing().append(model.unique_id) -%}
        {% call noop_statement('main', 'NO NEW ' ~ record_kinds | join(', ') | upper ~ ' RECORDS', 'SKIP', 0) -%}
            -- the new batches hold no {{ record_kinds | join(' or ') }} record: {{ target_relation }} stays as it is
        {%- endcall %}
        {{ return({'relations': [target_relation]}) }}
    {%- elif model.unique_id in cdc_models_writing_nothing() -%}
        {% call noop_statement('main', 'NOTHING NEW', 'SKIP', 0) -%}
            -- the model's query is empty in this run: {{ target_relation }} stays as it is
        {%- endcall %}
        {{ return({'relations': [target_relation]}) }}
    {%- endif -%}

    {{ run_hooks(pre_hooks) }}

    {#- on_schema_change 'fail': the check is part of the statement that writes -#}
    {%- set query = cdc_checked_query(target_relation, compiled_code) if on_schema_change == 'fail' else compiled_code -%}

    {%- call statement('main') -%}
        {%- if strategy == 'insert_overwrite' %}
            insert overwrite table {{ target_relation }}
            {%- if partition_by %} with ('partitionOverwriteMode' = 'dynamic') partition ({{ partition_by | join(', ') }}){% endif %} by name
            select * from (
                {{ query }}
            ) as cdc_written_rows
        {%- else -%}
            {{ dbt_spark_get_incremental_sql(
                strategy, '(\n' ~ query ~ '\n)', target_relation, existing_relation,
                config.get('unique_key', none),
                config.get('predicates', none) or config.get('incremental_predicates', none)) }}
        {%- endif -%}
    {%- endcall -%}

    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
