{#
    Closed-version partitions of cdc_history that a late change reaches, sorted. A touched key
    is late when its current version opened at or after its replay position; its versions
    from the last one opened before that position are recomputed. In-order runs have no late
    key and read only the current versions.
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
        {{ return([]) }}
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
        )

        select distinct history_partition
        from late_versions
        where version_number >= coalesce(prior_version_number, 0)
        order by 1
    {% endset %}
    {{ return(cdc_integer_list(query)) }}
{% endmacro %}
