{#
    The stored versions of the keys an incremental cdc_history run replays: the current
    versions of `current_buckets` and the closed versions in `closed_partitions` (those a late
    change recomputes), of the touched keys only, each with the last version its key had
    before its replay position (prior_version_number: the replay starts from that one).
    `columns` are the history's columns to select.
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
    select
        {% for column in columns %}stored.{{ column }},{% endfor %}
        max(if(stored.valid_from_sequence < touched_keys.replay_from_sequence, stored.version_number, null))
            over (partition by stored.table_id, stored.key_json)
            as prior_version_number
    from {{ this }} as stored
    inner join {{ ref('int_cdc_touched_keys') }} as touched_keys
        on
            stored.table_id = touched_keys.table_id
            and stored.key_json = touched_keys.key_json
    where
        (stored.is_current and stored.history_partition in ({{ current_buckets | join(', ') }}))
        {% if closed_partitions %}
            or (not stored.is_current and stored.history_partition in ({{ closed_partitions | join(', ') }}))
        {% endif %}
{%- endmacro %}

{#
    The stored versions of the keys an incremental cdc_history run replays, `query` (see
    cdc_history_touched_versions_query), put in a session view and cached: the model reads
    them in several places (the late keys, the version each key's replay starts from, the
    versions the MERGE may delete), and without the cache Spark scans the touched partitions
    and joins them to the touched keys again for each. Called again with a wider query (a
    late change's closed versions), it replaces the view and its cache. Returns the view's
    name while dbt runs the model (run, build, retry); otherwise (compile, docs) nothing is
    run and none is returned, and the model inlines `query`. The model's post-hook drops the
    view, and with it the cache.
#}
{% macro cdc_history_cache_touched_versions(query) %}
    {% if not execute or flags.WHICH not in ['run', 'build', 'retry'] %}
        {{ return(none) }}
    {% endif %}
    {% set view = cdc_history_touched_versions_view() %}
    {#- dropping a cached view uncaches it; CACHE TABLE ... AS makes the view and caches it -#}
    {% do run_query('drop view if exists ' ~ view) %}
    {% do run_query('cache table ' ~ view ~ ' as ' ~ query) %}
    {{ return(view) }}
{% endmacro %}

{# The name of the session view cdc_history_cache_touched_versions fills. #}
{% macro cdc_history_touched_versions_view() %}
    {{ return('cdc_history__touched_versions') }}
{% endmacro %}
