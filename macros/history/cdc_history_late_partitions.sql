{#
    Closed-version partitions of cdc_history that a late change reaches, sorted. A touched key
    is late when its current version opened at or after its replay position; its versions
    from the last one opened before that position are recomputed. `current_versions` is a
    relation (or a parenthesized query) of the touched keys' current versions with their
    prior_version_number (cdc_history_touched_versions_query over the current buckets): a key
    is late when it has none. So the late keys are found in the versions the run reads anyway
    (the model's cache), not by another scan of every current version; in-order runs have no
    late key and read no closed partition.
#}
{% macro cdc_history_late_partitions(current_versions) %}
    {% if current_versions is not string or not current_versions | trim %}
        {{ cdc_argument_error(
            'cdc_history_late_partitions', 'current_versions',
            "a relation or parenthesized query of the touched keys' current versions", current_versions) }}
    {% endif %}
    {% set touched = ref('int_cdc_touched_keys') %}
    {% set late_keys_query %}
        select
            current_versions.table_id,
            current_versions.key_json,
            touched.replay_from_sequence
        from {{ current_versions }} as current_versions
        inner join {{ touched }} as touched
            on current_versions.table_id = touched.table_id and current_versions.key_json = touched.key_json
        where current_versions.prior_version_number is null
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
