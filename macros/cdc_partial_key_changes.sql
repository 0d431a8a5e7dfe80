{#
    Updates that changed the key and carry a partial after image (formats with
    `partial_after_images` in var cdc_formats), one row each, from int_cdc_records: the old key
    (from_key_json), the new one (to_key_json) and their position. The new key's row is the old
    key's row at that position overlaid with the partial image, so the history of the new key
    depends on the old key's (cdc_history carries it over; int_cdc_touched_keys touches both).
    Empty when no such format has landed, without scanning anything.
#}
{% macro cdc_partial_key_changes() %}
    {%- set partial_formats = cdc_partial_image_formats() -%}
    select distinct
        table_id,
        from_key_json,
        to_key_json,
        sequence_key
    from (
        -- int_cdc_records splits each such update into a delete of the old key and an insert of
        -- the new one, from one record
        select
            table_id,
            sequence_key,
            max(if(op = 'delete', key_json, null)) as from_key_json,
            max(if(op = 'insert', key_json, null)) as to_key_json
        from {{ ref('int_cdc_records') }}
        where
            is_key_change
            and after_image_is_partial
            {% if not partial_formats %}
                and false
            {% endif %}
        group by message_id, record_index, table_id, sequence_key
    ) as key_changes
{% endmacro %}

{# The landed formats whose after images can be partial (var cdc_formats, `partial_after_images`). #}
{% macro cdc_partial_image_formats() %}
    {{ return(cdc_landed_formats() | select('in', cdc_formats_with('partial_after_images')) | list) }}
{% endmacro %}

{# The formats of var cdc_formats whose setting `flag` is true. #}
{% macro cdc_formats_with(flag) %}
    {% set formats = [] %}
    {% for name, settings in var('cdc_formats').items() if settings.get(flag, false) %}
        {% do formats.append(name) %}
    {% endfor %}
    {{ return(formats) }}
{% endmacro %}

{# var cdc_key_change_chain_limit, checked: a whole number of at least 1. #}
{% macro cdc_key_change_chain_limit() %}
    {% set limit = var('cdc_key_change_chain_limit') %}
    {% if limit is not number or limit < 1 or limit != limit | int %}
        {{ exceptions.raise_compiler_error(
            'var cdc_key_change_chain_limit must be a whole number of at least 1, got ' ~ limit
        ) }}
    {% endif %}
    {{ return(limit | int) }}
{% endmacro %}
