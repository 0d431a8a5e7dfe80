{#
    The stored versions of the keys an incremental cdc_history run replays, `query` (the model
    says which), put in a session view and cached once the run's plan is worked out: the model
    reads them in several places (the version each key's replay starts from, the versions the
    MERGE may delete), and without the cache Spark scans the touched partitions and joins them
    to the touched keys again for each. Returns the view's name while dbt runs the model (run,
    build, retry); otherwise (compile, docs) nothing is run and none is returned, and the
    model inlines `query`. The model's post-hook drops the view, and with it the cache.
#}
{% macro cdc_history_cache_touched_versions(query) %}
    {% if not execute or flags.WHICH not in ['run', 'build', 'retry'] %}
        {{ return(none) }}
    {% endif %}
    {% set view = cdc_history_touched_versions_view() %}
    {% do run_query('create or replace temporary view ' ~ view ~ ' as ' ~ query) %}
    {% do run_query('cache table ' ~ view) %}
    {{ return(view) }}
{% endmacro %}

{# The name of the session view cdc_history_cache_touched_versions fills. #}
{% macro cdc_history_touched_versions_view() %}
    {{ return('cdc_history__touched_versions') }}
{% endmacro %}
