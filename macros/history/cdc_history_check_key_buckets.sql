{#
    Stops an incremental cdc_history run whose var cdc_key_buckets is not the one the table was
    built with (its property cdc.key_buckets; a table made before the property existed was built
    with 64, the default then): its current versions sit in partitions of the other number, so
    the run would read and replace the wrong ones. `properties` is the `Table Properties` value
    of `describe extended` ("[key=value,...]"), which the MERGE reads for the columns anyway.
#}
{% macro cdc_history_check_key_buckets(relation, properties) %}
    {%- if properties is not string -%}
        {{ cdc_argument_error('cdc_history_check_key_buckets', 'properties', "the Table Properties text of describe extended", properties) }}
    {%- endif -%}
    {%- set stored = modules.re.search('(?:^|[\\[,])cdc\\.key_buckets=(\\d+)', properties) -%}
    {%- set built_with = stored.group(1) | int if stored else 64 -%}
    {%- if built_with != var('cdc_key_buckets') | int -%}
        {{ exceptions.raise_compiler_error(
            relation ~ " stores its current versions in " ~ built_with ~ " key buckets"
            ~ ("" if stored else " (built before it recorded the number: 64, the default then)")
            ~ ", and var cdc_key_buckets is " ~ var('cdc_key_buckets')
            ~ ": run `dbt build --full-refresh` to store them by the new number"
            ~ " (docs/upgrading.md), or set cdc_key_buckets back to " ~ built_with ~ ".") }}
    {%- endif -%}
{% endmacro %}
