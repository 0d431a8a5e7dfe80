{#
    The keys an incremental cdc_history run replays (cdc_touched_keys_query) with their stored
    versions: the current versions in `current_buckets` and the closed versions in
    `closed_partitions` (those a late change recomputes), each with the last version its key
    had before its replay position (prior_version_number: the replay starts from that one). A
    touched key without a stored version is one row whose version columns are null. `columns`
    are the history's columns to select (table_id, key_json and key_bucket are the touched
    key's), then replay_from_sequence, prior_version_number and is_key_row (true on one row of
    each key).
#}
{% macro cdc_history_touched_versions_query(current_buckets, closed_partitions, columns) %}
    {%- for value in current_buckets + closed_partitions if value is not integer -%}
        {{ cdc_argument_error(
            'cdc_history_touched_versions_query', 'current_buckets and closed_partitions',
            'lists of whole-number partitions', [current_buckets, closed_partitions]) }}
    {%- endfor -%}
    {%- if not current_buckets -%}
        {{ cdc_argument_error(
            'cdc_history_touched_versions_query', 'current_buckets', 'a non-empty list of key buckets', current_buckets) }}
    {%- endif %}
    {%- set key_columns = ['table_id', 'key_json', 'key_bucket'] %}
    select
        {% for column in columns %}{{ 'touched_keys' if column in key_columns else 'stored' }}.{{ column }},{% endfor %}
        touched_keys.replay_from_sequence,
        max(if(stored.valid_from_sequence < touched_keys.replay_from_sequence, stored.version_number, null))
            over (partition by touched_keys.table_id, touched_keys.key_json)
            as prior_version_number,
        -- one row of each key marked: the touched keys are read back with a filter, not a distinct
        -- (a shuffle in each query that reads them)
        row_number() over (partition by touched_keys.table_id, touched_keys.key_json order by stored.version_number) = 1
            as is_key_row
    from ({{ cdc_touched_keys_query() }}) as touched_keys
    left join (
        select *
        from {{ this }}
        where
            (is_current and history_partition in ({{ current_buckets | join(', ') }}))
            {% if closed_partitions %}
                or (not is_current and history_partition in ({{ closed_partitions | join(', ') }}))
            {% endif %}
    ) as stored
        on
            touched_keys.table_id = stored.table_id
            and touched_keys.key_json = stored.key_json
{%- endmacro %}

{#
    The stored versions of the keys an incremental cdc_history run replays, `query` (see
    cdc_history_touched_versions_query), put in a session view and cached: the model reads
    them in several places (the late keys, the version each key's replay starts from, the
    versions the MERGE may delete), and without the cache Spark scans the touched partitions
    and joins them to the touched keys again for each. The view is named for the invocation
    (cdc_history_touched_versions_view), so that a failed run's view, left in a long-lived
    session, is never in the way: the first call is one statement. Called again with a wider
    query (a late change's closed versions, `replace` true), it drops the view, which uncaches
    it, and caches the wider one. Returns the view's name while dbt runs the model (run, build,
    retry); otherwise (compile, docs) nothing is run and none is returned, and the model inlines
    `query`. The model's post-hook drops the view, and with it the cache.
#}
{% macro cdc_history_cache_touched_versions(query, replace=false) %}
    {% if not execute or flags.WHICH not in ['run', 'build', 'retry'] %}
        {{ return(none) }}
    {% endif %}
    {% set view = cdc_history_touched_versions_view() %}
    {% if replace %}
        {% do run_query('drop view if exists ' ~ view) %}
    {% endif %}
    {#- CACHE TABLE ... AS makes the view and caches it -#}
    {% do run_query('cache table ' ~ view ~ ' as ' ~ query) %}
    {{ return(view) }}
{% endmacro %}

{#
    The name of the session view cdc_history_cache_touched_versions fills: one per dbt
    invocation. A long-lived process releases a failed build's cache (cdc_dbt_spark.runner).
#}
{% macro cdc_history_touched_versions_view() %}
    {{ return('cdc_history__touched_versions_' ~ invocation_id | replace('-', '_')) }}
{% endmacro %}
