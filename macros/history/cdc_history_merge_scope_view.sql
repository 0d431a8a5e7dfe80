{# The name of the session view cdc_history_note_merge_scope fills and cdc_history_merge_sql reads. #}
{% macro cdc_history_merge_scope_view() %}
    {{ return('cdc_history__merge_scope') }}
{% endmacro %}
