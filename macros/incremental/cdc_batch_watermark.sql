{#
    The newest landing batch that a complete `dbt build` has processed: the max
    load_batch_id of cdc_load_batches, which is built last. Incremental models take
    batches above it, so a run that failed or was killed is simply redone. -1 (take
    everything) on a full refresh or before cdc_load_batches exists.

    Read once per dbt invocation, when it first asks, and kept in its state
    (cdc_invocation_state 'cdc_batch_watermark', shared by its nodes): every incremental model
    and the history's plan ask (ten queries of the ledger a build, each paying Delta's snapshot
    and file listing), and they all run before cdc_load_batches records the build's batches.
    The data tests that run after it in a `dbt build` need the watermark the build started at,
    which is this one. Where the landing table exists, the query that reads its partitions
    (cdc_landed_partitions, which every build reads too) reads the watermark with them.
#}
{% macro cdc_batch_watermark() %}
    {% if not execute or flags.FULL_REFRESH %}
        {{ return(-1) }}
    {% endif %}
    {% set known = cdc_invocation_state('cdc_batch_watermark', {}) %}
    {% if 'watermark' not in known %}
        {% do cdc_landed_partitions() %}
    {% endif %}
    {% if 'watermark' not in known %}
        {% set ledger = cdc_previous_run_relation('cdc_load_batches') %}
        {% set watermark = -1 if ledger is none else cdc_integer_list('select ' ~ cdc_batch_watermark_sql(ledger))[0] %}
        {% do known.update({'watermark': watermark}) %}
    {% endif %}
    {{ return(known.watermark) }}
{% endmacro %}

{# The watermark as a scalar SQL expression over the ledger relation `ledger`: its newest batch, -1 when empty. #}
{% macro cdc_batch_watermark_sql(ledger) %}
    {{ cdc_check_relation('cdc_batch_watermark_sql', ledger, 'the ledger cdc_load_batches') }}
    {{ return('(select coalesce(max(load_batch_id), -1) from ' ~ ledger ~ ')') }}
{% endmacro %}
