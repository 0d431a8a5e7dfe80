{# Post-hook of cdc_history: drop the partitions noted as emptied (cdc_history_note_emptied_partitions). #}
{% macro cdc_history_drop_emptied_partitions() %}
    {% if execute %}
        {% set specs = [] %}
        {% for partition in cdc_integer_list('select history_partition from ' ~ cdc_history_emptied_view()) %}
            {% do specs.append('partition (is_current = false, history_partition = ' ~ partition ~ ')') %}
        {% endfor %}
        {% if specs %}
            {% do run_query('alter table ' ~ this ~ ' drop if exists ' ~ specs | join(', ')) %}
        {% endif %}
        drop view if exists {{ cdc_history_emptied_view() }}
    {% endif %}
{% endmacro %}
