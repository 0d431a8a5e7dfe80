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

{#
    The formats of var cdc_formats that have landed anything (cdc_landed_partitions).
    int_cdc_records_unioned unions only these: a format that never landed adds nothing but
    a large query plan, and planning all nine formats costs seconds on every run. At parse
    time, when the landing table is missing or empty, every format (so lineage always shows
    them all).
#}
{% macro cdc_landed_formats() %}
    {% set all_formats = var('cdc_formats') | list %}
    {% if not execute %}
        {{ return(all_formats) }}
    {% endif %}
    {% set landed = cdc_landed_partitions() | map(attribute='source_format') | list %}
    {% set formats = all_formats | select('in', landed) | list %}
    {{ return(formats if formats else all_formats) }}
{% endmacro %}
