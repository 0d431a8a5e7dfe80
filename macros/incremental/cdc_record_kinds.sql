{#
    The record kinds int_cdc_records holds: the accepted values of `record_kind` in its data test
    (models/intermediate/_int_cdc__models.yml), read from the project's graph so that the list is
    written once. Config cdc_record_kinds of a model is checked against it (cdc_no_new_records_of).
#}
{% macro cdc_record_kinds() %}
    {%- set records = 'model.' ~ project_name ~ '.int_cdc_records' -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'test' and node.attached_node == records -%}
        {%- set kinds = (node.test_metadata.kwargs.get('accepted_values') or {}).get('record_kind') -%}
        {%- if kinds -%}
            {{ return(kinds | list) }}
        {%- endif -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "cdc_record_kinds: no data test of int_cdc_records accepts values of record_kind; got none for " ~ records) }}
{% endmacro %}
