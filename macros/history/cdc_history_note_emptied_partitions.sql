{#
    The closed-version partitions an incremental cdc_history run empties, noted before the
    insert in a session view that the post-hook reads (insert_overwrite only replaces
    partitions it writes rows to). Called by the model once its plan is worked out, so that
    the plan's queries run once per run.
#}
{% macro cdc_history_note_emptied_partitions(partitions) %}
    {% if partitions is string or partitions is not iterable or partitions | reject('integer') | list %}
        {{ cdc.cdc_argument_error('cdc_history_note_emptied_partitions', 'partitions', 'a list of partition ids (whole numbers)', partitions) }}
    {% endif %}
    {% do run_query(
        'create or replace temporary view ' ~ cdc_history_emptied_view() ~ ' as select explode(cast(array('
        ~ partitions | join(', ') ~ ') as array<bigint>)) as history_partition'
    ) %}
{% endmacro %}
