{#
    Google Datastream events in the avro format -> canonical CDC records, one per event.
    A thin entry point, plain Jinja: the event model is shared with the other Datastream
    format, so the work (and the adapter dispatch) is macro `flatten_datastream`'s.
#}
{% macro flatten_datastream_avro(relation) %}
    {{ return(flatten_datastream(relation, 'datastream_avro')) }}
{% endmacro %}
