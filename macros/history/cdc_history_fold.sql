{#
    The SCD2 fold of cdc_history over `changes` (a relation or CTE name with cdc_history's
    change columns): each key's changes in sequence order, the deletes that end no live version
    dropped, and each row's live image: a full after image as it is, a partial one overlaid on
    the row as it was (each run of partial images folded onto the full image, or `carry` row,
    that starts it; onto nothing after a delete), keeping only the columns its message declares
    where it declares them (partial_image_columns: a column dropped upstream is not carried
    over). Adds is_deleted, image_segment and live_image.
    With partial_images false (no landed format's after images can be partial: the plan's
    partial_images) every after image is whole, and the fold's window (a second sort of every
    change, and every image cast to a map) is left out.
#}
{% macro cdc_history_fold(changes, partial_images) %}
    {% if changes is none or (changes is string and not changes | trim) %}
        {{ cdc.cdc_argument_error('cdc_history_fold', 'changes', 'the name of a relation or CTE of the change columns', changes) }}
    {% endif %}
    {% if partial_images is not boolean %}
        {{ cdc.cdc_argument_error('cdc_history_fold', 'partial_images', 'true or false', partial_images) }}
    {% endif %}
    {{ return(adapter.dispatch('cdc_history_fold', 'cdc')(changes, partial_images)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_history_fold(changes, partial_images) %}
    {{ cdc.cdc_unsupported_adapter('cdc_history_fold') }}
{% endmacro %}

{% macro spark__cdc_history_fold(changes, partial_images) %}
    {%- set key_order = 'partition by table_id, key_json order by sequence_key, op, event_id' -%}
    select
        segmented.*,
        case
            when segmented.is_deleted then null
            when not segmented.after_image_is_partial then segmented.after_image
            {% if partial_images %}
            else to_variant_object(aggregate(
                collect_list(cast(segmented.after_image as map <string, variant>))
                    over (
                        partition by segmented.table_id, segmented.key_json, segmented.image_segment
                        order by segmented.sequence_key, segmented.op, segmented.event_id
                        rows between unbounded preceding and current row
                    ),
                cast(map() as map <string, variant>),
                (row_so_far, changed) -> map_zip_with(
                    row_so_far, changed, (column_name, old_value, new_value) -> coalesce(new_value, old_value)
                ),
                -- the columns the change's message declares, where it declares them: a column
                -- dropped upstream is not carried over from the row as it was
                live_row -> if(
                    segmented.partial_image_columns is null,
                    live_row,
                    map_filter(
                        live_row,
                        (column_name, column_value) -> array_contains(segmented.partial_image_columns, column_name)
                    )
                )
            ))
            {% endif %}
        end as live_image
    from (
        select
            effective.*,
            sum(if(effective.is_deleted or not effective.after_image_is_partial, 1, 0)) over (
                {{ key_order }}
                rows between unbounded preceding and current row
            ) as image_segment
        from (
            -- deletes that end no live version are not versions
            select *
            from (
                select
                    changes.*,
                    changes.op in ('delete', 'truncate') as is_deleted,
                    lag(changes.op in ('delete', 'truncate')) over ({{ key_order }}) as previous_is_deleted
                from {{ changes }} as changes
            ) as flagged
            where is_prior or not (is_deleted and coalesce(previous_is_deleted, op = 'truncate'))
        ) as effective
    ) as segmented
{% endmacro %}
