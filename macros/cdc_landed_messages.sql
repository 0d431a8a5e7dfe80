{#
    The landed messages of one format, parsed once. Every flattening macro starts
    here, so the landing columns and the JSON parse are the same for all formats.
#}
{% macro cdc_landed_messages(relation, source_format) %}
    {% if source_format not in var('cdc_formats') %}
        {{ exceptions.raise_compiler_error(
            "cdc_landed_messages: unknown format '" ~ source_format
            ~ "'; declare it in var cdc_formats in dbt_project.yml") }}
    {% endif %}
    select
        message_id,
        load_batch_id,
        source_format,
        message_text,
        loader_error,
        try_parse_json(message_text) as message
    from {{ relation }}
    where source_format = '{{ source_format }}'
{% endmacro %}
