{#
    The landing batches of the latest run, for data tests: none when tests check every
    batch (var cdc_test_scope: all, a first or full build, or a last run that took them all).
#}
{% macro cdc_run_batches() %}
    {% set scope = var('cdc_test_scope', 'run') %}
    {% if scope not in ['run', 'all'] %}
        {{ exceptions.raise_compiler_error("cdc_run_batches: var cdc_test_scope must be `run` or `all`; got " ~ scope) }}
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
        from {{ cdc_previous_run_relation('cdc_load_batches') }}
    {% endset %}
    {% set last_run = [] %}
    {% set earlier_runs = [] %}
    {% for row in run_query(last_run_query).rows %}
        {% do (last_run if row[1] else earlier_runs).append(row[0] | int) %}
    {% endfor %}
    {{ return(last_run | unique | sort | list if earlier_runs else none) }}
{% endmacro %}
