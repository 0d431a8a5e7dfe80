{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['key_bucket'],
        pre_hook="{{ cdc_drop_touched_partitions() }}",
    )
}}
-- depends_on: {{ ref('int_cdc_touched_buckets') }}
{#
    The live rows: the current, not deleted version of every key. The touched buckets
    are dropped first, so a bucket whose rows were all deleted ends up empty.
#}
with current_versions as (
    select
        table_id,
        key_json,
        row_image,
        valid_from,
        valid_from_sequence,
        op,
        event_id,
        source_format,
        key_bucket
    from {{ ref('cdc_history') }}
    where
        is_current
        and not is_deleted
    {% if is_incremental() %}
            and key_bucket in (select key_bucket from {{ ref('int_cdc_touched_buckets') }})
        {% endif %}
)

select * from current_versions
