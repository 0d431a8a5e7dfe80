{{ config(materialized='table') }}
-- depends_on: {{ ref('int_cdc_key_changes') }}
-- depends_on: {{ ref('stg_cdc_previous_run__load_batches') }}
-- depends_on: {{ ref('stg_cdc_previous_run__history') }}
{#
    The keys whose history this run recomputes, each from its replay position: the
    earliest sequence at which the new batches change it. A truncate in the new batches
    touches every key of its table that cdc_history holds (read as stored before this
    run, as model stg_cdc_previous_run__history names it: a ref would be a cycle). Empty on a
    first or full build, where cdc_history is
    built from every event.

    A key change with a partial after image (int_cdc_key_changes) ties two keys: the new
    key's row starts from the old key's row at that position. So a key touched at or before
    such a change touches the other key of the change from its position, and so on along
    chains (one round per link of the longest one: cdc_key_change_rounds).
#}
{%- set watermark = cdc_batch_watermark() -%}
{%- set history = cdc_previous_run_relation('cdc_history') -%}
{#- the history's current versions are read only when the new batches hold a truncate (a scan
    of every current version otherwise spent on nothing: 1.6 s a run at 2M events) -#}
{%- set truncating = history is not none and watermark >= 0
    and cdc_new_records_summary(watermark).truncates > 0 -%}
{#- join rounds along partial key changes; 0 on a first or full build, or with no format that has them -#}
{%- set follows = history is not none and watermark >= 0 and cdc_partial_image_formats() -%}
{%- set rounds = cdc_key_change_rounds() if follows else 0 -%}
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

{% if truncating %}
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

touched_by_changes as (
    select
        table_id,
        key_json,
        max(key_bucket) as key_bucket,
        min(sequence_key) as replay_from_sequence
    from (
        select * from changed_keys
        {% if truncating %}
            union all
            select * from truncated_keys
        {% endif %}
    ) as touched
    group by table_id, key_json
),

{% if rounds > 0 %}
    key_change_ends as (
        {{ cdc_key_change_ends() }}
    ),

    touched_0 as (
        select
            table_id,
            key_json,
            replay_from_sequence
        from touched_by_changes
    ),

    {#- one round per link of a chain; each round reads the previous one once -#}
    {% for round in range(1, rounds + 1) %}
        touched_{{ round }} as (
            select
                table_id,
                key_json,
                min(replay_from_sequence) as replay_from_sequence
            from (
                select
                    touched.table_id,
                    reached.key_json,
                    reached.replay_from_sequence
                from touched_{{ round - 1 }} as touched
                left join key_change_ends
                    on
                        touched.table_id = key_change_ends.table_id
                        and touched.key_json = key_change_ends.key_json
                        and touched.replay_from_sequence <= key_change_ends.sequence_key
                lateral view inline(array(
                    named_struct('key_json', touched.key_json, 'replay_from_sequence', touched.replay_from_sequence),
                    named_struct(
                        'key_json', key_change_ends.other_key_json,
                        'replay_from_sequence', key_change_ends.sequence_key
                    )
                )) reached as key_json, replay_from_sequence
                where reached.key_json is not null
            ) as reached_keys
            group by table_id, key_json
        ),
    {% endfor %}

    final as (
        select
            table_id,
            key_json,
            {{ cdc_key_bucket('table_id', 'key_json') }} as key_bucket,
            replay_from_sequence
        from touched_{{ rounds }}
    )
{% else %}
    final as (
        select * from touched_by_changes
    )
{% endif %}

select * from final
