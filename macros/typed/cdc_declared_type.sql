{#
    The Spark type of a column in the typed tables, from the vendor type its envelope declares
    (var cdc_formats, `declared_types`, matched by the name before any '(' or space, in any case);
    none when the format lists no such type (the type of the values then applies). `decimal`
    takes the declaration's precision and scale (`decimal(10,2)`, Kafka Connect's
    `...Decimal(scale=2,connect.decimal.precision=5)`, precision 38 where a Decimal gives none,
    decimal(38,18) without either); more than 38 digits is none. A MySQL `unsigned`
    integer takes the next wider type, which holds its whole range.
#}
{% macro cdc_declared_type(source_format, declared_type) %}
    {%- if source_format is not string or source_format not in var('cdc_formats') -%}
        {{ cdc_argument_error('cdc_declared_type', 'source_format', 'a format declared in var cdc_formats (dbt_project.yml)', source_format) }}
    {%- endif -%}
    {%- if declared_type is not none and declared_type is not string -%}
        {{ cdc_argument_error('cdc_declared_type', 'declared_type', 'a vendor type name or none', declared_type) }}
    {%- endif -%}
    {%- if declared_type is none or not declared_type | trim -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set re = modules.re -%}
    {%- set declared = declared_type | trim | lower -%}
    {%- set spark_types = {} -%}
    {%- for vendor_type, spark_type in var('cdc_formats')[source_format].get('declared_types', {}).items() -%}
        {%- do spark_types.update({vendor_type | lower: spark_type}) -%}
    {%- endfor -%}
    {%- set spark_type = spark_types.get(re.split('[( ]', declared)[0]) -%}
    {%- if spark_type == 'decimal' -%}
        {%- set kafka_scale = re.search('scale=([0-9]+)', declared) -%}
        {%- set kafka_precision = re.search('connect[.]decimal[.]precision=([0-9]+)', declared) -%}
        {%- set precision_scale = re.search('[(] *([0-9]+) *(, *([0-9]+) *)?[)]', declared) -%}
        {%- if kafka_scale -%}
            {%- set digits = [(kafka_precision.group(1) if kafka_precision else 38) | int, kafka_scale.group(1) | int] -%}
        {%- elif precision_scale -%}
            {%- set digits = [precision_scale.group(1) | int, (precision_scale.group(3) or 0) | int] -%}
        {%- else -%}
            {%- set digits = [38, 18] -%}
        {%- endif -%}
        {%- if digits[0] > 38 or digits[1] > digits[0] -%}
            {{ return(none) }}
        {%- endif -%}
        {%- set spark_type = 'decimal(' ~ digits[0] ~ ',' ~ digits[1] ~ ')' -%}
    {%- elif spark_type and 'unsigned' in declared.split() -%}
        {%- set spark_type = {'tinyint': 'smallint', 'smallint': 'int', 'int': 'bigint', 'bigint': 'decimal(20,0)'}.get(spark_type, spark_type) -%}
    {%- endif -%}
    {{ return(spark_type) }}
{% endmacro %}
