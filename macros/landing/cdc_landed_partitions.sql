{#
    The landing table's partitions, [{load_batch_id, source_format, first_message_id,
    last_message_id}] (the least and greatest message_id of a partition above the watermark,
    none below it); empty when the table is missing. Above the watermark they are read from the landing table itself, pruned to those
    partitions (a run reads its new batches' files, not every landed file: Delta's SHOW
    PARTITIONS reads them all, ~1 s a call at 2M messages and growing with the table); at or
    below it, from the ledger cdc_load_batches, which holds every batch a run took. Read once
    per dbt invocation and kept in its state (cdc_invocation_state, shared by its nodes),
    as the watermark is (cdc_batch_watermark): a build asks a dozen times (its models' plans,
    its data tests' scope), and each query pays Delta's snapshot and file listing; one build
    sees one landing.

    The watermark is the newest of the ledger's batches, so this one query also answers
    cdc_batch_watermark when it has not asked yet: the landing's filter then reads it as a
    scalar subquery, which Spark runs before the scan and prunes the landing's partitions with.
    On an incremental run with typed tables it also reads cdc_typed_columns' watermark of each
    table (cdc_typed_columns_seen_through): one statement for what the invocation finds stored.
#}
{% macro cdc_landed_partitions() %}
    {% set landing = source('cdc_landing', 'raw_cdc_messages') %}
    {% if adapter.get_relation(database=landing.database, schema=landing.schema, identifier=landing.identifier) is none %}
        {{ return([]) }}
    {% endif %}
    {% set known = cdc_invocation_state('cdc_landed_partitions', {}) %}
    {% if 'partitions' in known %}
        {{ return(known.partitions) }}
    {% endif %}
    {% set known_watermark = cdc_invocation_state('cdc_batch_watermark', {}) %}
    {% set incremental = execute and not flags.FULL_REFRESH %}
    {% set ledger = cdc_previous_run_relation('cdc_load_batches') if incremental else none %}
    {% set typed_columns = cdc_previous_run_relation('cdc_typed_columns')
        if incremental and var('cdc_typed_tables', none) else none %}
    {% if ledger is none %}
        {% set watermark = -1 %}
    {% elif 'watermark' in known_watermark %}
        {% set watermark = known_watermark.watermark %}
    {% else %}
        {% set watermark = cdc_batch_watermark_sql(ledger) %}
    {% endif %}
    {% set partitions_query %}
        select
            load_batch_id,
            source_format,
            min(message_id) as first_message_id,
            max(message_id) as last_message_id,
            'landed' as fact
        from {{ landing }}
        where load_batch_id > {{ watermark }}
        group by load_batch_id, source_format
        {% if ledger is not none %}
            union all
            select
                load_batch_id,
                source_format,
                cast(null as string) as first_message_id,
                cast(null as string) as last_message_id,
                'taken' as fact
            from {{ ledger }}
        {% endif %}
        {% if typed_columns is not none %}
            -- each typed table's watermark (its table_id in source_format)
            union all
            select
                max(seen_through_batch_id) as load_batch_id,
                table_id as source_format,
                cast(null as string) as first_message_id,
                cast(null as string) as last_message_id,
                'typed_seen_through' as fact
            from {{ typed_columns }}
            group by table_id
        {% endif %}
    {% endset %}
    {% set partitions = [] %}
    {% set taken = [-1] %}
    {% set typed_seen_through = {} %}
    {% for row in run_query(partitions_query).rows %}
        {% if row['fact'] == 'typed_seen_through' %}
            {% do typed_seen_through.update({row['source_format']: row['load_batch_id'] | int}) %}
        {% else %}
            {% do partitions.append({
                'load_batch_id': row['load_batch_id'] | int, 'source_format': row['source_format'],
                'first_message_id': row['first_message_id'], 'last_message_id': row['last_message_id'],
            }) %}
        {% endif %}
        {% if row['fact'] == 'taken' %}{% do taken.append(row['load_batch_id'] | int) %}{% endif %}
    {% endfor %}
    {% if typed_columns is not none %}
        {% do cdc_invocation_state('cdc_typed_columns_seen_through', {}).update({'tables': typed_seen_through}) %}
    {% endif %}
    {% if incremental and 'watermark' not in known_watermark %}
        {% do known_watermark.update({'watermark': taken | max}) %}
    {% endif %}
    {% do known.update({'partitions': partitions}) %}
    {{ return(partitions) }}
{% endmacro %}
