{#
    What a data test checks: by default (var cdc_test_scope: run) the rows of the latest
    run, so that testing costs in proportion to what a run lands; `all` checks whole tables.
    A test opts in with one of these placeholders in its `where` config, replaced when the
    test runs (dbt renders `where` with vars only, so macros cannot be called there):
      __cdc_run_batches__   rows of the run's landing batches (column load_batch_id)
      __cdc_run_keys__      every row of each key the run changes (table_id, key_json),
                            every key of a table it truncates; in a typed table's model (one
                            source table, no table_id column), the keys of that table, none in a
                            build whose new batches hold none of its records
      __cdc_run_messages__  every row sharing a message_id with the run's batches
      __cdc_run_wrote__     every row, unless the build wrote nothing to the model (it took no
                            batch, none held the record kinds of its config cdc_record_kinds,
                            or the model found its query empty: cdc_models_writing_nothing);
                            for a seed's test, unless the build found the seed unchanged since
                            the test passed on it (cdc_seed_states)
      __cdc_run_whole__     every row where the scope is every row (a first or full build,
                            cdc_test_scope: all), none in an incremental run: for a view
                            that aggregates whole tables (cdc_stream_progress), whose input
                            rows the run wrote are checked by their own tables' tests
    A test whose `where` is then only `false` sends no query (macros/materializations/test.sql).
    A test whose config `meta` names a sequence column (`cdc_run_from: sequence_key`) checks, in
    a build, only the rows whose value there is at or after the first position the new batches
    hold, or null: what a build writes starts there (cdc_new_records_summary), and the literal
    bound lets Delta skip the files of older rows. Likewise `cdc_run_message_range: message_id`
    keeps the rows whose id lies between the least and greatest of the run's batches (for a
    where of __cdc_run_messages__ and __cdc_run_batches__ only, whose rows all do), and stands
    for __cdc_run_messages__ itself: the table is not read a second time for the run's ids.
    The run's batches are, in `dbt build`, those the build processes (none when nothing was
    landed since the last run: its models wrote nothing, so its tests check nothing); in
    `dbt test`, those above the watermark or, when there are none, those of the last
    completed run (cdc_run_batches).
    When a model's test fails, dbt build skips cdc_load_batches (it depends on every
    model): the run is not recorded, so the next build processes and checks it again.
#}
{% macro spark__get_where_subquery(relation) -%}
    {{ cdc_check_relation('spark__get_where_subquery', relation, 'the tested relation') }}
    {%- set where = config.get('where', '') -%}
    {%- if not where -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- if '__cdc_run_' in where -%}
        {%- set where = cdc_run_scope_where(where, relation) -%}
        {#- nothing but `false` joined by and/or: the test has nothing to check (test materialization) -#}
        {%- if execute and modules.re.fullmatch('[()\\s]*false([()\\s]+(and|or)[()\\s]+false)*[()\\s]*', where | lower) -%}
            {%- do cdc_empty_test_scopes().append(model.unique_id) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('(select * from ' ~ relation ~ ' where ' ~ where ~ ') dbt_subquery') }}
{%- endmacro %}
