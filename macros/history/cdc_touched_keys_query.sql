{#
    The SELECT of the keys an incremental cdc_history run recomputes, each from its replay
    position: the earliest sequence at which the new batches change it (table_id, key_json,
    key_bucket, replay_from_sequence; one row per key). A truncate in the new batches touches
    every key of its table that cdc_history holds (read as stored before this run, as model
    stg_cdc_previous_run__history names it). Empty on a first or full build, where cdc_history
    is built from every event.

    A key change with a partial after image (int_cdc_key_changes) ties two keys: the new
    key's row starts from the old key's row at that position. So a key touched at or before
    such a change touches the other key of the change from its position, and so on along
    chains (one round per link of the longest one: cdc_key_change_rounds).

    cdc_history compiles it into the queries that read the touched keys (its plan, and the
    touched versions it caches), rather than store it as a table of its own: one statement and
    one Delta commit fewer a build. Ephemeral model int_cdc_touched_keys is this query, for the
    docs and a whole-scope test. Nested subqueries, no WITH: Spark does not find a cached view
    whose query holds a WITH when a query with its own WITH reads it (cdc_history's MERGE
    would compute the touched versions again instead of reading their cache).
#}
{% macro cdc_touched_keys_query() %}
    {%- set watermark = cdc_batch_watermark() -%}
    {%- set history = cdc_previous_run_relation('cdc_history') -%}
    {#- the history's current versions are read only when the new batches hold a truncate (a scan
        of every current version otherwise spent on nothing: 1.6 s a run at 2M events) -#}
    {%- set truncating = history is not none and watermark >= 0
        and cdc_new_records_summary(watermark).truncated_tables | length > 0 -%}
    {#- join rounds along partial key changes; 0 on a first or full build, or with no format that has them -#}
    {%- set follows = history is not none and watermark >= 0 and cdc_partial_image_formats() -%}
    {%- set rounds = cdc_key_change_rounds() if follows else 0 -%}
    {#- the new batches' changes (none on a first or full build) -#}
    {%- set new_changes = cdc_new_batches(watermark) ~ " and record_kind in ('row_change', 'ddl')"
        ~ (' and false' if watermark < 0 else '') -%}
    {#- each key the new batches change, from its earliest position; with a truncate, every current
        key of its table from the truncate's -#}
    {%- set touched_by_changes -%}
        select
            table_id,
            key_json,
            max(key_bucket) as key_bucket,
            min(sequence_key) as replay_from_sequence
        from (
            select
                table_id,
                key_json,
                key_bucket,
                sequence_key
            from {{ ref('int_cdc_records') }}
            where
                {{ new_changes }}
                and op is not null
                and key_json is not null
            {% if truncating %}
                union all
                select
                    history.table_id,
                    history.key_json,
                    history.key_bucket,
                    new_truncates.sequence_key
                from {{ history }} as history
                inner join (
                    select
                        table_id,
                        sequence_key
                    from {{ ref('int_cdc_records') }}
                    where
                        {{ new_changes }}
                        and op = 'truncate'
                ) as new_truncates
                    on history.table_id = new_truncates.table_id
                where history.is_current
            {% endif %}
        ) as touched
        group by table_id, key_json
    {%- endset -%}
    {% if rounds == 0 %}
        {{ touched_by_changes }}
    {% else %}
        {#- one round per link of a chain; each round reads the previous one once -#}
        {%- set touched = namespace(rounds='select table_id, key_json, replay_from_sequence from ('
            ~ touched_by_changes ~ ') as touched_by_changes') -%}
        {% for round in range(1, rounds + 1) %}
            {%- set touched.rounds -%}
                select
                    table_id,
                    key_json,
                    min(replay_from_sequence) as replay_from_sequence
                from (
                    select
                        touched.table_id,
                        reached.key_json,
                        reached.replay_from_sequence
                    from ({{ touched.rounds }}) as touched
                    left join ({{ cdc_key_change_ends() }}) as key_change_ends
                        on
                            touched.table_id = key_change_ends.table_id
                            and touched.key_json = key_change_ends.key_json
                            and touched.replay_from_sequence <= key_change_ends.sequence_key
                    lateral view inline(array(
                        named_struct('key_json', touched.key_json, 'replay_from_sequence', touched.replay_from_sequence),
                        named_struct(
                            'key_json', key_change_ends.other_key_json,
                            'replay_from_sequence', key_change_ends.sequence_key
                        )
                    )) reached as key_json, replay_from_sequence
                    where reached.key_json is not null
                ) as reached_keys
                group by table_id, key_json
            {%- endset -%}
        {% endfor %}
        select
            table_id,
            key_json,
            {{ cdc_key_bucket('table_id', 'key_json') }} as key_bucket,
            replay_from_sequence
        from ({{ touched.rounds }}) as touched_rounds
    {% endif %}
{% endmacro %}
