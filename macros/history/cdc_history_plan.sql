{#
    What an incremental cdc_history run reads and rewrites, worked out before it runs
    from narrow scans; the partition lists are inlined so that Spark reads only those.
      incremental         false on a first or full build (then nothing else is set)
      current_buckets     key buckets of the touched keys: their current versions are rewritten
      first_replay_sequence  the earliest replay position of all touched keys (with one key
                          bucket, a lower bound of it: the earliest position the new batches hold)
      closed_partitions   closed-version partitions holding versions a late change recomputes,
      event_batches       and cdc_events partitions holding changes of touched keys at or after
                          their replay position: empty here; the model fills them from the
                          touched versions it reads anyway (cdc_history_plan_reads)
      run_batch           the newest landing batch: its day is the partition of the versions
                          this run closes (cdc_history_closed_partition)
      partial_images      whether a landed format's after images can be partial
                          (cdc_partial_image_formats): only then does the fold overlay images
      key_change_rounds   0 unless the run replays a key change with a partial after image
                          (int_cdc_key_changes), whose new key starts from the old key's row;
                          then the links of the longest chain of such key changes, one join
                          round each (cdc_history_key_change_rounds)
#}
{% macro cdc_history_plan() %}
    {% set plan = {
        'incremental': false, 'current_buckets': [], 'closed_partitions': [], 'event_batches': [], 'run_batch': none,
        'first_replay_sequence': none,
        'key_change_rounds': 0,
        'partial_images': cdc_partial_image_formats() | length > 0,
    } %}
    {% set watermark = cdc_batch_watermark() if execute and is_incremental() else -1 %}
    {% if watermark < 0 %}
        {% do plan.update({'key_change_rounds': cdc_history_key_change_rounds(false, plan.partial_images)}) %}
        {{ return(plan) }}
    {% endif %}
    {% if var('cdc_key_buckets') | int == 1 %}
        {#- one bucket (the default): the plan is known without a query. The keys a run touches are
            those of its row changes and, with a truncate, the current keys of the truncated table
            (cdc_touched_keys_query), all in bucket 0; the earliest position the new batches hold
            (cdc_new_records_summary) bounds their replay positions from below, which is all the
            literal bound needs; the run's batch is the newest it takes (cdc_pending_batches). A
            truncate of a table without current versions then merges nothing, as no touched key does -#}
        {% set summary = cdc_new_records_summary(watermark) %}
        {% set touches = summary.records_by_kind.get('row_change', 0) > 0 or summary.truncated_tables | length > 0 %}
        {% set touched_buckets = [[0, summary.first_sequence, cdc_pending_batches(watermark) | max]] if touches else [] %}
    {% else %}
        {% set touched = '(' ~ cdc_touched_keys_query() ~ ')' %}
        {#- the touched keys' buckets, the earliest replay position of all (a literal bound on
            sequence_key lets Delta skip the files of cdc_events whose changes all come before it) and
            the run's batch (cdc_history_run_batch_query), in one query -#}
        {% set touched_buckets = run_query(
            'select distinct touched.key_bucket, min(touched.replay_from_sequence) over (), run_batch.load_batch_id from '
            ~ touched ~ ' as touched cross join (' ~ cdc_history_run_batch_query(watermark) ~ ') as run_batch order by 1').rows %}
    {% endif %}
    {% set current_buckets = [] %}
    {% for row in touched_buckets %}
        {% do current_buckets.append(row[0] | int) %}
    {% endfor %}
    {#- no touched key: nothing is merged, and no version is closed (no run batch is needed) -#}
    {% do plan.update({
        'incremental': true,
        'current_buckets': current_buckets,
        'run_batch': touched_buckets[0][2] | int if touched_buckets else none,
    }) %}
    {% if plan.current_buckets %}
        {% do plan.update({
            'first_replay_sequence': touched_buckets[0][1],
            'key_change_rounds': cdc_history_key_change_rounds(true, plan.partial_images),
        }) %}
    {% endif %}
    {{ return(plan) }}
{% endmacro %}
