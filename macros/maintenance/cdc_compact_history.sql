{#
    Compacts what incremental runs fragment in cdc_history: the current versions (each run
    writes a file of the versions it opens or changes, and marks the rows it replaces in the
    older files with deletion vectors) and the closed versions of the last `days` days (each
    run writes a file into its day's partition, cdc_history_closed_partition). Older days were
    compacted while they were recent. OPTIMIZE rewrites only partitions with more than one file
    or with deleted rows: a compaction right after another costs a listing, not a rewrite.
    cdc-run calls it when the table's last --compact-every commits hold no OPTIMIZE; a scheduler
    can too:

        dbt run-operation cdc_compact_history
#}
{% macro cdc_compact_history(days=2) %}
    {% if days is not integer or days < 1 %}
        {{ cdc_argument_error('cdc_compact_history', 'days', 'a whole number of days (at least 1)', days) }}
    {% endif %}
    {% set node = graph.nodes['model.' ~ project_name ~ '.cdc_history'] %}
    {% set history = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) %}
    {% if history is none %}
        {{ log('cdc_compact_history: no ' ~ node.relation_name ~ ' yet, nothing to compact', info=true) }}
        {{ return(none) }}
    {% endif %}
    {#- now, as a landing batch id (microseconds since the epoch, UTC) -#}
    {% set since_epoch = modules.datetime.datetime.utcnow() - modules.datetime.datetime(1970, 1, 1) %}
    {% set now_batch = (since_epoch.total_seconds() * 1000000) | int %}
    {% set since = cdc_history_closed_partition(now_batch) - (days - 1) * 86400000000 %}
    {% do run_query('optimize ' ~ history ~ ' where is_current or history_partition >= ' ~ since) %}
    {{ log('cdc_compact_history: ' ~ history ~ ' compacted (current versions, closed versions of the last '
        ~ days ~ ' days)', info=true) }}
{% endmacro %}
