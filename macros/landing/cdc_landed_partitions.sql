{#
    The landing table's partitions, [{load_batch_id, source_format}], from its partition
    list (metadata only, no data scanned); empty when the table is missing.
#}
{% macro cdc_landed_partitions() %}
    {% set landing = source('cdc_landing', 'raw_cdc_messages') %}
    {% if adapter.get_relation(database=landing.database, schema=landing.schema, identifier=landing.identifier) is none %}
        {{ return([]) }}
    {% endif %}
    {% set partitions = [] %}
    {% for partition in run_query('show partitions ' ~ landing).columns[0].values() %}
        {% set fields = {} %}
        {% for part in partition.split('/') %}
            {% do fields.update({part.split('=', 1)[0]: part.split('=', 1)[1]}) %}
        {% endfor %}
        {% do partitions.append({'load_batch_id': fields.load_batch_id | int, 'source_format': fields.source_format}) %}
    {% endfor %}
    {{ return(partitions) }}
{% endmacro %}
