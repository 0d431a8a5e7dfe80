{#
    What an incremental cdc_history run reads and rewrites, worked out before it runs
    from narrow scans; the partition lists are inlined so that Spark reads only those.
      incremental         false on a first or full build (then nothing else is set)
      current_buckets     key buckets of the touched keys: their current versions are rewritten
      closed_partitions   closed-version partitions holding versions a late change recomputes
                          (see cdc_history_late_partitions)
      event_batches       cdc_events partitions holding changes of touched keys at or after
                          their replay position
      run_batch           the newest landing batch: the partition of versions this run closes
      partial_images      whether a landed format's after images can be partial
                          (cdc_partial_image_formats): only then does the fold overlay images
      emptied_partitions  closed-version partitions whose rows this run all recomputes (and
                          writes elsewhere): the post-hook drops them
      key_change_rounds   0 unless the run replays a key change with a partial after image
                          (int_cdc_key_changes), whose new key starts from the old key's row;
                          then the links of the longest chain of such key changes, one join
                          round each (cdc_history_key_change_rounds)
#}
{% macro cdc_history_plan() %}
    {% set plan = {
        'incremental': false, 'current_buckets': [], 'closed_partitions': [], 'event_batches': [], 'run_batch': none,
        'emptied_partitions': [], 'key_change_rounds': 0,
        'partial_images': cdc_partial_image_formats() | length > 0,
    } %}
    {% set watermark = cdc_batch_watermark() if execute and is_incremental() else -1 %}
    {% if watermark < 0 %}
        {% do plan.update({'key_change_rounds': cdc_history_key_change_rounds(false, plan.partial_images)}) %}
        {{ return(plan) }}
    {% endif %}
    {% set touched = ref('int_cdc_touched_keys') %}
    {% do plan.update({
        'incremental': true,
        'current_buckets': cdc_integer_list('select distinct key_bucket from ' ~ touched ~ ' order by 1'),
        'run_batch': cdc_history_run_batch(watermark),
    }) %}
    {% if plan.current_buckets %}
        {% set late = cdc_history_late_partitions() %}
        {% do plan.update({'closed_partitions': late.keys() | list | sort}) %}
        {% for partition, is_emptied in late.items() if is_emptied and partition != plan.run_batch %}
            {% do plan.emptied_partitions.append(partition) %}
        {% endfor %}
        {% set event_batches_query %}
            select distinct events.load_batch_id
            from {{ ref('cdc_events') }} as events
            inner join {{ touched }} as touched
                on events.table_id = touched.table_id and events.key_json = touched.key_json
            where events.sequence_key >= touched.replay_from_sequence
            order by 1
        {% endset %}
        {% do plan.update({
            'event_batches': cdc_integer_list(event_batches_query),
            'key_change_rounds': cdc_history_key_change_rounds(true, plan.partial_images),
        }) %}
    {% endif %}
    {{ return(plan) }}
{% endmacro %}

{#
    The join rounds cdc_history needs to carry rows over key changes with a partial after image
    (cdc_key_change_rounds), or 0 when the run replays none: always 0 without a landed format
    that has them (nothing is read then); else a count of int_cdc_key_changes, over the touched
    keys on an incremental run, says whether it replays any. With nothing landed (a first
    build, or compiled for lint or docs) the whole model is rendered: there is nothing to read.
#}
{% macro cdc_history_key_change_rounds(incremental, partial_images) %}
    {% if not execute or not partial_images %}
        {{ return(0) }}
    {% endif %}
    {% if not cdc_landed_partitions() %}
        {{ return(cdc_key_change_rounds()) }}
    {% endif %}
    {% set touched = ref('int_cdc_touched_keys') %}
    {% set query %}
        select count(*)
        from {{ ref('int_cdc_key_changes') }} as key_changes
        {% if incremental %}
            inner join {{ touched }} as touched
                on
                    key_changes.table_id = touched.table_id
                    and key_changes.to_key_json = touched.key_json
                    and key_changes.sequence_key >= touched.replay_from_sequence
        {% endif %}
    {% endset %}
    {{ return(cdc_key_change_rounds() if cdc_integer_list(query)[0] > 0 else 0) }}
{% endmacro %}

{# The newest batch this run processes: closed versions it writes go to its partition. #}
{% macro cdc_history_run_batch(watermark) %}
    {{ return(cdc_integer_list(
        'select coalesce(max(load_batch_id), -1) from ' ~ ref('int_cdc_records')
        ~ ' where ' ~ cdc_new_batches(watermark)
    )[0]) }}
{% endmacro %}

{#
    Closed-version partitions of cdc_history that a late change reaches, as
    {partition: true when every row in it is recomputed}. A touched key is late when its
    current version opened at or after its replay position; its versions from the last
    one opened before that position are recomputed. Partitions whose rows are all
    recomputed get no row back from the insert and are dropped by the post-hook.
    In-order runs have no late key and read only the current versions.
#}
{% macro cdc_history_late_partitions() %}
    {% set touched = ref('int_cdc_touched_keys') %}
    {% set late_keys_query %}
        select
            history.table_id,
            history.key_json,
            touched.replay_from_sequence
        from {{ this }} as history
        inner join {{ touched }} as touched
            on history.table_id = touched.table_id and history.key_json = touched.key_json
        where history.is_current and history.valid_from_sequence >= touched.replay_from_sequence
    {% endset %}
    {% if cdc_integer_list('select count(*) from (' ~ late_keys_query ~ ')')[0] == 0 %}
        {{ return({}) }}
    {% endif %}
    {% set query %}
        with late_keys as ({{ late_keys_query }}),

        late_versions as (
            select
                history.history_partition,
                history.version_number,
                max(if(history.valid_from_sequence < late_keys.replay_from_sequence, history.version_number, null))
                    over (partition by history.table_id, history.key_json) as prior_version_number
            from {{ this }} as history
            inner join late_keys
                on history.table_id = late_keys.table_id and history.key_json = late_keys.key_json
            where not history.is_current
        ),

        recomputed as (
            select history_partition, count(*) as recomputed_rows
            from late_versions
            where version_number >= coalesce(prior_version_number, 0)
            group by history_partition
        ),

        stored as (
            select history_partition, count(*) as stored_rows
            from {{ this }}
            where not is_current and history_partition in (select history_partition from recomputed)
            group by history_partition
        )

        select recomputed.history_partition, recomputed.recomputed_rows = stored.stored_rows as is_emptied
        from recomputed
        inner join stored on recomputed.history_partition = stored.history_partition
    {% endset %}
    {% set partitions = {} %}
    {% for row in run_query(query).rows %}
        {% do partitions.update({row[0] | int: row[1]}) %}
    {% endfor %}
    {{ return(partitions) }}
{% endmacro %}

{#
    The closed-version partitions an incremental cdc_history run empties, noted before the
    insert in a session view that the post-hook reads (insert_overwrite only replaces
    partitions it writes rows to). Called by the model once its plan is worked out, so that
    the plan's queries run once per run.
#}
{% macro cdc_history_note_emptied_partitions(partitions) %}
    {% do run_query(
        'create or replace temporary view ' ~ cdc_history_emptied_view() ~ ' as select explode(cast(array('
        ~ partitions | join(', ') ~ ') as array<bigint>)) as history_partition'
    ) %}
{% endmacro %}

{#
    Pre-hook of cdc_history: if cdc_history exists but no run has completed (no watermark),
    it is emptied and built whole.
#}
{% macro cdc_history_prepare() %}
    {% if execute and is_incremental() and cdc_batch_watermark() < 0 %}
        truncate table {{ this }}
    {% endif %}
{% endmacro %}

{# Post-hook of cdc_history: drop the partitions noted as emptied (cdc_history_note_emptied_partitions). #}
{% macro cdc_history_drop_emptied_partitions() %}
    {% if execute %}
        {% set specs = [] %}
        {% for partition in cdc_integer_list('select history_partition from ' ~ cdc_history_emptied_view()) %}
            {% do specs.append('partition (is_current = false, history_partition = ' ~ partition ~ ')') %}
        {% endfor %}
        {% if specs %}
            {% do run_query('alter table ' ~ this ~ ' drop if exists ' ~ specs | join(', ')) %}
        {% endif %}
        drop view if exists {{ cdc_history_emptied_view() }}
    {% endif %}
{% endmacro %}

{% macro cdc_history_emptied_view() %}
    {{ return('cdc_history__emptied_partitions') }}
{% endmacro %}
