{#
    Google Datastream events in the json format -> canonical CDC records, one per event.
    A thin entry point, plain Jinja: the event model is shared with the other Datastream
    format, so the work (and the adapter dispatch) is macro `flatten_datastream`'s.
#}
{% macro flatten_datastream_json(relation) %}
    {{ return(flatten_datastream(relation, 'datastream_json')) }}
{% endmacro %}
