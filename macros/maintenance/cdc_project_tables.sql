{#
    The Delta tables of this project that exist in the target's schema, as relations: every
    table or incremental model and, with include_landing, the loader's tables (the landing table
    and its Kafka ledger raw_kafka_offsets) and the seeds. Views (cdc_current, the typed tables) are left out: they hold no data.
#}
{% macro cdc_project_tables(include_landing=false) %}
    {% if include_landing is not boolean %}
        {{ cdc_argument_error('cdc_project_tables', 'include_landing', 'true or false', include_landing) }}
    {% endif %}
    {% set relations = [] %}
    {% set kinds = ['table', 'incremental'] + (['seed'] if include_landing else []) %}
    {% for node in graph.nodes.values()
        if node.package_name == project_name and node.resource_type in ['model', 'seed']
        and node.config.enabled and node.config.materialized in kinds %}
        {% set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) %}
        {% if relation is not none %}
            {% do relations.append(relation) %}
        {% endif %}
    {% endfor %}
    {% if include_landing %}
        {% for landing in [source('cdc_landing', 'raw_cdc_messages'), source('cdc_landing', 'raw_kafka_offsets')] %}
            {% set relation = adapter.get_relation(database=landing.database, schema=landing.schema, identifier=landing.identifier) %}
            {% if relation is not none %}
                {% do relations.append(relation) %}
            {% endif %}
        {% endfor %}
    {% endif %}
    {{ return(relations | sort(attribute='identifier')) }}
{% endmacro %}
