{#
    A mutable object kept for the rest of this dbt invocation under `name`, shared by its nodes
    (dbt gives every node the same `graph`): `initial` the first time it is asked for, the same
    object after. Keyed by invocation_id, so that a process running several invocations (the
    runner, the tests) starts each afresh.
#}
{% macro cdc_invocation_state(name, initial) %}
    {%- if name is not string or not name -%}
        {{ cdc_argument_error('cdc_invocation_state', 'name', 'a non-empty string', name) }}
    {%- endif -%}
    {%- if initial is not mapping and (initial is string or initial is not iterable) -%}
        {{ cdc_argument_error('cdc_invocation_state', 'initial', 'a list or a mapping (mutable)', initial) }}
    {%- endif -%}
    {%- set key = name ~ ' ' ~ invocation_id -%}
    {%- if key not in graph -%}
        {%- do graph.update({key: initial}) -%}
    {%- endif -%}
    {{ return(graph[key]) }}
{% endmacro %}
