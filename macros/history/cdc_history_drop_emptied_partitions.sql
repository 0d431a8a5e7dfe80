{#
    Post-hook of cdc_history: delete the closed-version partitions noted as emptied
    (cdc_history_note_emptied_partitions). The condition names partition columns only, so Delta
    removes whole files without reading them.
#}
{% macro cdc_history_drop_emptied_partitions() %}
    {% if execute %}
        {% set partitions = cdc_integer_list('select history_partition from ' ~ cdc_history_emptied_view()) %}
        {% if partitions %}
            {% do run_query(
                'delete from ' ~ this ~ ' where not is_current and history_partition in (' ~ partitions | join(', ') ~ ')'
            ) %}
        {% endif %}
        drop view if exists {{ cdc_history_emptied_view() }}
    {% endif %}
{% endmacro %}
