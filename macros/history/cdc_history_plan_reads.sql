{#
    Completes an incremental cdc_history run's plan (cdc_history_plan) from the touched keys'
    current versions, which the run reads anyway (the model's cache), in one query:
      event_batches       the cdc_events partitions holding changes of touched keys at or after
                          their replay position (the earliest of all as a literal bound, which
                          lets Delta skip the files of older changes)
      closed_partitions   the closed-version partitions a late change reaches, sorted. A touched
                          key is late when its current version opened at or after its replay
                          position: in `current_versions`, it has no prior_version_number. Its
                          versions from the last one opened before that position are recomputed;
                          only then is a second query run, of the closed versions of the late keys.
    So in-order runs read no closed partition and find the late keys without another scan of
    every current version. `current_versions` is a relation (or a parenthesized query) of the
    touched keys with their replay_from_sequence, their current versions, prior_version_number and
    is_key_row (cdc_history_touched_versions_query over the current buckets: a key without a
    stored version has null version columns).
#}
{% macro cdc_history_plan_reads(plan, current_versions) %}
    {% if plan is not mapping or not plan.get('current_buckets') %}
        {{ cdc_argument_error(
            'cdc_history_plan_reads', 'plan', "an incremental run's cdc_history_plan with current buckets", plan) }}
    {% endif %}
    {% if current_versions is not string or not current_versions | trim %}
        {{ cdc_argument_error(
            'cdc_history_plan_reads', 'current_versions',
            "a relation or parenthesized query of the touched keys' current versions", current_versions) }}
    {% endif %}
    {#- each touched key is in current_versions, with its replay position (its version columns null
        when it has no stored version) -#}
    {% set touched = '(select table_id, key_json, replay_from_sequence from ' ~ current_versions ~ ' where is_key_row)' %}
    {% set late_keys_query %}
        select
            current_versions.table_id,
            current_versions.key_json,
            current_versions.replay_from_sequence
        from {{ current_versions }} as current_versions
        where current_versions.version_number is not null and current_versions.prior_version_number is null
    {% endset %}
    {% set reads_query %}
        select distinct
            'event_batch' as fact,
            events.load_batch_id as value
        from {{ ref('cdc_events') }} as events
        inner join {{ touched }} as touched
            on events.table_id = touched.table_id and events.key_json = touched.key_json
        where
            events.sequence_key >= touched.replay_from_sequence
            and events.sequence_key >= {{ cdc_string_literal(plan.first_replay_sequence) }}
        union all
        select
            'late_keys' as fact,
            count(*) as value
        from ({{ late_keys_query }})
    {% endset %}
    {% set event_batches = [] %}
    {% set late = namespace(keys=0) %}
    {% for row in run_query(reads_query).rows %}
        {% if row[0] == 'event_batch' %}
            {% do event_batches.append(row[1] | int) %}
        {% else %}
            {% set late.keys = row[1] | int %}
        {% endif %}
    {% endfor %}
    {% do plan.update({'event_batches': event_batches | sort}) %}
    {% if late.keys == 0 %}
        {{ return(none) }}
    {% endif %}
    {% set closed_partitions_query %}
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
        )

        select distinct history_partition
        from late_versions
        where version_number >= coalesce(prior_version_number, 0)
        order by 1
    {% endset %}
    {% do plan.update({'closed_partitions': cdc_integer_list(closed_partitions_query)}) %}
{% endmacro %}
