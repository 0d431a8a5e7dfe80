{#
    Google Datastream events in the avro format -> canonical CDC records, one per event.
    A thin entry point: the event model is shared with the other Datastream format, so the
    work is done by macro `flatten_datastream`.
#}
{% macro flatten_datastream_avro(relation) %}
    {{ return(adapter.dispatch('flatten_datastream_avro', 'cdc')(relation)) }}
{% endmacro %}

{% macro default__flatten_datastream_avro(relation) %}
    {{ return(flatten_datastream(relation, 'datastream_avro')) }}
{% endmacro %}
