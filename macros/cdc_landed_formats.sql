{#
    The formats of var cdc_formats that have landed anything, read from the landing
    table's partition list (metadata only, no data scanned). int_cdc_records_unioned
    unions only these: a format that never landed adds nothing but a large query plan,
    and planning all nine formats costs seconds on every run. At parse time, when the
    landing table is missing or empty, every format (so lineage always shows them all).
#}
{% macro cdc_landed_formats() %}
    {% set all_formats = var('cdc_formats') | list %}
    {% if not execute %}
        {{ return(all_formats) }}
    {% endif %}
    {% set landing = source('cdc_landing', 'raw_cdc_messages') %}
    {% if adapter.get_relation(database=landing.database, schema=landing.schema, identifier=landing.identifier) is none %}
        {{ return(all_formats) }}
    {% endif %}
    {% set landed = [] %}
    {% for partition in run_query('show partitions ' ~ landing).columns[0].values() %}
        {% for part in partition.split('/') if part.startswith('source_format=') %}
            {% do landed.append(part.split('=', 1)[1]) %}
        {% endfor %}
    {% endfor %}
    {% set formats = all_formats | select('in', landed) | list %}
    {{ return(formats if formats else all_formats) }}
{% endmacro %}
