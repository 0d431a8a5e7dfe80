{#
    Pre-hooks of int_cdc_records on an incremental run: parse the batches above the
    watermark once, into a cached session view that the model reads twice (its rows,
    and the partitions they touch). Spark inlines a CTE at each use, so without this
    the nine-format parse would be planned and run twice. Spills to disk when large.
#}
{% macro cdc_cache_new_records() %}
    {% if execute and is_incremental() %}
        {% do run_query('drop view if exists ' ~ cdc_new_records_view()) %}
        cache table {{ cdc_new_records_view() }} as
        select *
        from {{ ref('int_cdc_records_unioned') }}
        where load_batch_id > {{ cdc_batch_watermark() }}
    {% endif %}
{% endmacro %}

{# The session view of the new records (int_cdc_records drops it when done). #}
{% macro cdc_new_records_view() %}
    {{ return('int_cdc_records__new_records') }}
{% endmacro %}
