{#
    Each typed table's watermark in cdc_typed_columns as this invocation found it stored:
    {table_id: the newest landing batch read for it}; a table absent has not been read. Read by
    the invocation's first query of what is stored (cdc_landed_partitions, which fills this
    invocation's state 'cdc_typed_columns_seen_through'), else here in one query of its own
    (nothing landed yet, or a full refresh).
#}
{% macro cdc_typed_columns_seen_through() %}
    {%- set known = cdc_invocation_state('cdc_typed_columns_seen_through', {}) -%}
    {%- if 'tables' not in known -%}
        {%- do cdc_landed_partitions() -%}
    {%- endif -%}
    {%- if 'tables' not in known -%}
        {%- set seen_through = {} -%}
        {%- set stored = cdc_previous_run_relation('cdc_typed_columns') -%}
        {%- if stored is not none -%}
            {%- for row in run_query(
                'select table_id, max(seen_through_batch_id) from ' ~ stored ~ ' group by table_id').rows -%}
                {%- do seen_through.update({row[0]: row[1] | int}) -%}
            {%- endfor -%}
        {%- endif -%}
        {%- do known.update({'tables': seen_through}) -%}
    {%- endif -%}
    {{ return(known.tables) }}
{% endmacro %}
