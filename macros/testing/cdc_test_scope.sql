{#
    What a data test checks: by default (var cdc_test_scope: run) the rows of the latest
    run, so that testing costs in proportion to what a run lands; `all` checks whole tables.
    A test opts in with one of these placeholders in its `where` config, replaced when the
    test runs (dbt renders `where` with vars only, so macros cannot be called there):
      __cdc_run_batches__   rows of the run's landing batches (column load_batch_id)
      __cdc_run_keys__      every row of each key the run changes (table_id, key_json),
                            every key of a table it truncates
      __cdc_run_messages__  every row sharing a message_id with the run's batches
    The run's batches are those above the watermark (what a build in progress processes)
    or, when there are none, those of the last completed run (a `dbt test` after it).
    When a model's test fails, dbt build skips cdc_load_batches (it depends on every
    model): the run is not recorded, so the next build processes and checks it again.
#}
{% macro spark__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- if not where -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- if '__cdc_run_' in where -%}
        {%- set where = cdc_run_scope_where(where, relation) -%}
    {%- endif -%}
    {{ return('(select * from ' ~ relation ~ ' where ' ~ where ~ ') dbt_subquery') }}
{%- endmacro %}

{# `where` with each scope placeholder replaced by its condition on `relation`. #}
{% macro cdc_run_scope_where(where, relation) %}
    {%- set known = ['__cdc_run_batches__', '__cdc_run_keys__', '__cdc_run_messages__'] -%}
    {%- for placeholder in modules.re.findall('__cdc_run_[a-z]+__', where) if placeholder not in known -%}
        {{ exceptions.raise_compiler_error(
            "unknown test scope placeholder " ~ placeholder ~ " in `where: " ~ where ~ "`; known: " ~ known | join(', ')
        ) }}
    {%- endfor -%}
    {%- set in_batches = cdc_run_batches_condition() -%}
    {%- set every_row = in_batches == 'true' -%}
    {%- if '__cdc_run_keys__' in where -%}
        {#- not ref(): dbt resolves a test's refs before its `where`; the tested models are
            downstream of int_cdc_records, so it is built before them -#}
        {%- set records = graph.nodes['model.' ~ project_name ~ '.int_cdc_records'].relation_name -%}
        {%- set in_keys -%}
            ((table_id, key_json) in (
                select table_id, key_json from {{ records }} where {{ in_batches }} and key_json is not null
            )
            or table_id in (
                select table_id from {{ records }} where {{ in_batches }} and op = 'truncate' and key_json is null
            ))
        {%- endset -%}
        {%- set where = where | replace('__cdc_run_keys__', 'true' if every_row else in_keys) -%}
    {%- endif -%}
    {%- set in_messages = 'message_id in (select message_id from ' ~ relation ~ ' where ' ~ in_batches ~ ')' -%}
    {{ return(where
        | replace('__cdc_run_batches__', in_batches)
        | replace('__cdc_run_messages__', 'true' if every_row else in_messages)) }}
{% endmacro %}

{# The condition on `column` that selects the latest run's batches (cdc_run_batches). #}
{% macro cdc_run_batches_condition(column='load_batch_id') %}
    {%- set batches = cdc_run_batches() -%}
    {%- if batches is none -%}
        {{ return('true') }}
    {%- endif -%}
    {{ return(column ~ ' in (' ~ batches | join(', ') ~ ')' if batches else 'false') }}
{% endmacro %}

{#
    The landing batches of the latest run, for data tests: none when tests check every
    batch (var cdc_test_scope: all, a first or full build, or a last run that took them all).
#}
{% macro cdc_run_batches() %}
    {% set scope = var('cdc_test_scope', 'run') %}
    {% if scope not in ['run', 'all'] %}
        {{ exceptions.raise_compiler_error("var cdc_test_scope must be `run` or `all`; got " ~ scope) }}
    {% endif %}
    {% set watermark = cdc_batch_watermark() %}
    {% if scope == 'all' or watermark < 0 %}
        {{ return(none) }}
    {% endif %}
    {% set ceiling = cdc_batch_ceiling(watermark) %}
    {% set landed = cdc_landed_partitions() | map(attribute='load_batch_id') | select('gt', watermark) | unique | sort | list %}
    {% set pending = landed if ceiling is none else landed | select('le', ceiling) | list %}
    {% if pending %}
        {{ return(pending) }}
    {% endif %}
    {% set last_run_query %}
        select load_batch_id, built_at = max(built_at) over () as is_last_run
        from {{ adapter.get_relation(database=none, schema=target.schema, identifier='cdc_load_batches') }}
    {% endset %}
    {% set last_run = [] %}
    {% set earlier_runs = [] %}
    {% for row in run_query(last_run_query).rows %}
        {% do (last_run if row[1] else earlier_runs).append(row[0] | int) %}
    {% endfor %}
    {{ return(last_run | unique | sort | list if earlier_runs else none) }}
{% endmacro %}
