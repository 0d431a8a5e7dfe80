{#
    The earlier landing batches (at or below the watermark) holding records at a position
    (table, key, sequence) that the new batches also change: a pair split over two
    batches, a message landed again. cdc_events merges those records with the new ones
    and rewrites the partitions of these batches only. The scan reads four narrow
    columns, and only the files whose sequence_key can reach the new batches' earliest
    position (a literal bound Delta skips files by: earlier batches hold earlier changes,
    bar a few late ones; the bound comes from cdc_new_records_summary); the list is inlined so
    that Spark reads just these partitions.
#}
{% macro cdc_events_rework_batches(watermark) %}
    {%- if watermark is not number or watermark != watermark | int or watermark < -1 -%}
        {{ cdc_argument_error('cdc_events_rework_batches', 'watermark', 'a whole number of at least -1 (cdc_batch_watermark)', watermark) }}
    {%- endif -%}
    {% if not execute or watermark < 0 %}
        {{ return([]) }}
    {% endif %}
    {% set records = ref('int_cdc_records') %}
    {% set new_records = cdc_new_batches(watermark) ~ ' and op is not null' %}
    {% set floor = cdc_new_records_summary(watermark).first_sequence %}
    {% if floor is none %}
        {{ return([]) }}
    {% endif %}
    {% set query %}
        with new_positions as (
            select distinct table_id, key_json, sequence_key
            from {{ records }}
            where {{ new_records }}
        )

        select distinct earlier.load_batch_id
        from {{ records }} as earlier
        left semi join new_positions
            on
                earlier.table_id = new_positions.table_id
                and earlier.key_json <=> new_positions.key_json
                and earlier.sequence_key = new_positions.sequence_key
        where
            earlier.load_batch_id <= {{ watermark }}
            and earlier.op is not null
            and earlier.sequence_key >= {{ cdc_string_literal(floor) }}
        order by 1
    {% endset %}
    {{ return(cdc_integer_list(query)) }}
{% endmacro %}
