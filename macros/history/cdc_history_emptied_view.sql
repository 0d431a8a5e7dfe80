{# The name of the session view cdc_history_note_emptied_partitions fills and the post-hook reads. #}
{% macro cdc_history_emptied_view() %}
    {{ return('cdc_history__emptied_partitions') }}
{% endmacro %}
