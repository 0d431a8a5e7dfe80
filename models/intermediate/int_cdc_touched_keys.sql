{{ config(materialized='table') }}
{#
    The keys whose history this run recomputes, each from its replay position: the
    earliest sequence at which the new batches change it. A truncate in the new batches
    touches every key of its table that cdc_history holds (read as stored before this
    run; a ref would be a cycle). Empty on a first or full build, where cdc_history is
    built from every event.
#}
{%- set watermark = cdc_batch_watermark() -%}
{%- set history = adapter.get_relation(database=this.database, schema=this.schema, identifier='cdc_history') -%}
with new_changes as (
    select
        table_id,
        key_json,
        key_bucket,
        op,
        sequence_key
    from {{ ref('int_cdc_records') }}
    where
        {{ cdc_new_batches(watermark) }}
        and record_kind in ('row_change', 'ddl')
        and op is not null
        {% if watermark < 0 %}
            and false
        {% endif %}
),

changed_keys as (
    select
        table_id,
        key_json,
        key_bucket,
        sequence_key
    from new_changes
    where key_json is not null
),

{% if history is not none %}
    truncated_keys as (
        select
            history.table_id,
            history.key_json,
            history.key_bucket,
            new_changes.sequence_key
        from {{ history }} as history
        inner join new_changes
            on history.table_id = new_changes.table_id
        where
            history.is_current
            and new_changes.op = 'truncate'
    ),
{% endif %}

final as (
    select
        table_id,
        key_json,
        max(key_bucket) as key_bucket,
        min(sequence_key) as replay_from_sequence
    from (
        select * from changed_keys
        {% if history is not none %}
            union all
            select * from truncated_keys
        {% endif %}
    ) as touched
    group by table_id, key_json
)

select * from final
