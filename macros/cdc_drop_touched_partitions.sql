{#
    Pre-hook of incremental models whose touched partitions can become empty
    (cdc_current): drop them, so that insert_overwrite leaves no stale rows behind.
    The bucket numbers come from int_cdc_touched_buckets (integers we computed).
#}
{% macro cdc_drop_touched_partitions() %}
    {% if execute and is_incremental() %}
        {% set touched = run_query('select key_bucket from ' ~ ref('int_cdc_touched_buckets')) %}
        {% set buckets = touched.columns[0].values() %}
        {% if buckets | length > 0 %}
            alter table {{ this }} drop if exists
            {% for bucket in buckets %}
                partition (key_bucket = {{ bucket | int }}){% if not loop.last %},{% endif %}
            {% endfor %}
        {% endif %}
    {% endif %}
{% endmacro %}
