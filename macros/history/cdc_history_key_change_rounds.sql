{#
    The join rounds cdc_history needs to carry rows over key changes with a partial after image
    (cdc_key_change_rounds), or 0 when the run replays none: always 0 without a landed format
    that has them (nothing is read then); else a count of int_cdc_key_changes, over the touched
    keys on an incremental run, says whether it replays any. With nothing landed (a first
    build, or compiled for lint or docs) the whole model is rendered: there is nothing to read.
#}
{% macro cdc_history_key_change_rounds(incremental, partial_images) %}
    {% for name, value in {'incremental': incremental, 'partial_images': partial_images}.items() %}
        {% if value is not boolean %}
            {{ cdc.cdc_argument_error('cdc_history_key_change_rounds', name, 'true or false', value) }}
        {% endif %}
    {% endfor %}
    {% if not execute or not partial_images %}
        {{ return(0) }}
    {% endif %}
    {% if not cdc_landed_partitions() %}
        {{ return(cdc_key_change_rounds()) }}
    {% endif %}
    {% set touched = '(' ~ cdc_touched_keys_query() ~ ')' %}
    {% set query %}
        select count(*)
        from {{ ref('int_cdc_key_changes') }} as key_changes
        {% if incremental %}
            inner join {{ touched }} as touched
                on
                    key_changes.table_id = touched.table_id
                    and key_changes.to_key_json = touched.key_json
                    and key_changes.sequence_key >= touched.replay_from_sequence
        {% endif %}
    {% endset %}
    {{ return(cdc_key_change_rounds() if cdc_integer_list(query)[0] > 0 else 0) }}
{% endmacro %}
