{#
    Whether the session's insert overwrite replaces only the partitions it writes
    (spark.sql.sources.partitionOverwriteMode is DYNAMIC), as profiles.yml sets it where this
    project starts Spark or a server. Asked once per invocation and kept in its `graph`: a
    target's profile cannot tell (dbt's `target` has no `method`), and a `set` per model is a
    statement each. Where the answer is no (a server someone else started), each model sets it.
#}
{% macro cdc_partition_overwrite_is_dynamic() %}
    {%- set memo_key = 'cdc_partition_overwrite_is_dynamic ' ~ invocation_id -%}
    {%- if memo_key not in graph -%}
        {%- set mode = run_query('set spark.sql.sources.partitionOverwriteMode').rows[0][1] -%}
        {%- do graph.update({memo_key: (mode | string | trim | upper) == 'DYNAMIC'}) -%}
    {%- endif -%}
    {{ return(graph[memo_key]) }}
{% endmacro %}
