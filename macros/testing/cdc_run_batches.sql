{#
    The landing batches of the latest run, for data tests: none when tests check every
    batch (var cdc_test_scope: all, a first or full build, or a last run that took them all).
    In `dbt build`, the batches the build processes (pending when it started), also once it
    has recorded them in the ledger: an empty list when it processes none, as its models then
    wrote nothing. Otherwise (a `dbt test` after a run) the batches above the watermark, or
    those of the last completed run.
#}
{% macro cdc_run_batches() %}
    {% set scope = var('cdc_test_scope', 'run') %}
    {% if scope not in ['run', 'all'] %}
        {{ exceptions.raise_compiler_error("cdc_run_batches: var cdc_test_scope must be `run` or `all`; got " ~ scope) }}
    {% endif %}
    {#- not executing (parsed, compiled for docs): nothing is read, like a first build -#}
    {% if scope == 'all' or not execute %}
        {{ return(none) }}
    {% endif %}
    {#- the watermark this invocation started at (read once, cdc_batch_watermark) -#}
    {% set watermark = cdc_batch_watermark() %}
    {#- a build needs only that: the batches it processes were pending when it started -#}
    {% if flags.WHICH == 'build' %}
        {{ return(none if watermark < 0 else cdc_pending_batches(watermark)) }}
    {% endif %}
    {% if watermark < 0 %}
        {{ return(none) }}
    {% endif %}
    {% set pending = cdc_pending_batches(watermark) %}
    {% if pending %}
        {{ return(pending) }}
    {% endif %}
    {% set last_run_query %}
        select load_batch_id, built_at = max(built_at) over () as is_last_run
        from {{ cdc_previous_run_relation('cdc_load_batches') }}
    {% endset %}
    {% set last_run = [] %}
    {% set earlier_runs = [] %}
    {% for row in run_query(last_run_query).rows %}
        {% do (last_run if row[1] else earlier_runs).append(row[0] | int) %}
    {% endfor %}
    {{ return(last_run | unique | sort | list if earlier_runs else none) }}
{% endmacro %}
