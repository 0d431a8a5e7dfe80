{#
    A table of this project as the previous run left it (cdc_load_batches, cdc_history), found by
    name in the target's schema: none before the first build, or when not executing. The models
    that read one cannot ref it (it is built after them): they name its staging model of
    models/staging/previous_run with `-- depends_on:`.
#}
{% macro cdc_previous_run_relation(identifier) %}
    {%- if identifier is not string or not identifier | trim -%}
        {{ cdc_argument_error('cdc_previous_run_relation', 'identifier', 'the name of a table of this project, e.g. cdc_load_batches', identifier) }}
    {%- endif -%}
    {{ return(adapter.get_relation(database=none, schema=target.schema, identifier=identifier) if execute else none) }}
{% endmacro %}
