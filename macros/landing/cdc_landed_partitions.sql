{#
    The landing table's partitions, [{load_batch_id, source_format}], from its partition
    values (Delta Lake's SHOW PARTITIONS reads them from the table's log: no data scanned);
    empty when the table is missing.
#}
{% macro cdc_landed_partitions() %}
    {% set landing = source('cdc_landing', 'raw_cdc_messages') %}
    {% if adapter.get_relation(database=landing.database, schema=landing.schema, identifier=landing.identifier) is none %}
        {{ return([]) }}
    {% endif %}
    {% set partitions = [] %}
    {% for row in run_query('show partitions ' ~ landing).rows %}
        {% do partitions.append({'load_batch_id': row['load_batch_id'] | int, 'source_format': row['source_format']}) %}
    {% endfor %}
    {{ return(partitions) }}
{% endmacro %}
