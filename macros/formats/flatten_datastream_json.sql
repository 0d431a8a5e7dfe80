{#
    Google Datastream events in the json format -> canonical CDC records, one per event.
    A thin entry point: the event model is shared with the other Datastream format, so the
    work is done by macro `flatten_datastream`.
#}
{% macro flatten_datastream_json(relation) %}
    {{ return(adapter.dispatch('flatten_datastream_json', 'cdc')(relation)) }}
{% endmacro %}

{% macro default__flatten_datastream_json(relation) %}
    {{ return(flatten_datastream(relation, 'datastream_json')) }}
{% endmacro %}
