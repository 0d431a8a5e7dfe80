{#
    What the records of the run's new batches hold, from one narrow query of int_cdc_records
    (the batches' partitions only), for the models that would otherwise each ask (or write
    nothing at the cost of a write):
      records_by_kind     {record_kind: records}; a kind absent has none
      first_sequence      the earliest sequence_key of a record with an op (none without one):
                          cdc_events' bound on earlier batches (cdc_events_rework_batches)
      partial_key_changes records of key changes with a partial after image (int_cdc_key_changes)
      tables              the table_ids of the records, sorted (the data tests of a typed table's
                          models check nothing when its table has none: cdc_run_scope_where)
      truncated_tables    the table_ids of table-wide truncates, sorted (cdc_touched_keys_query,
                          cdc_run_scope_where)
    Read once per dbt invocation and kept in its state (cdc_invocation_state), when a model
    downstream of int_cdc_records (or a data test of one) first asks: in a `dbt build` that is after
    int_cdc_records has stored the new batches. An empty summary (no query) when the run takes
    no batch. The data tests of a model with config cdc_record_kinds check nothing when it holds
    none of those kinds (cdc_run_scope_where): the model wrote nothing.
#}
{% macro cdc_new_records_summary(watermark) %}
    {%- if watermark is not number or watermark != watermark | int or watermark < 0 -%}
        {{ cdc_argument_error('cdc_new_records_summary', 'watermark', 'a whole number of at least 0 (cdc_batch_watermark of an incremental run)', watermark) }}
    {%- endif -%}
    {%- set summary = {'records_by_kind': {}, 'first_sequence': none, 'partial_key_changes': 0,
        'tables': [], 'truncated_tables': []} -%}
    {#- not executing (parsed, compiled for docs): nothing is read, nor kept -#}
    {%- if not execute -%}
        {{ return(summary) }}
    {%- endif -%}
    {%- set known = cdc_invocation_state('cdc_new_records_summary', {}) -%}
    {%- if 'summary' not in known -%}
        {%- set new_batches = cdc_new_batches(watermark) -%}
        {%- if new_batches != 'false' -%}
            {#- not ref(): data tests ask too (cdc_run_scope_where), and dbt resolves a test's refs
                before it runs -#}
            {%- set records = graph.nodes['model.' ~ project_name ~ '.int_cdc_records'].relation_name -%}
            {%- set rows = run_query(
                'select record_kind, count(*), min(if(op is not null, sequence_key, null)), '
                ~ 'count_if(is_key_change and after_image_is_partial), to_json(collect_set(table_id)), '
                ~ "to_json(collect_set(if(op = 'truncate' and key_json is null, table_id, null))) from " ~ records
                ~ ' where ' ~ new_batches ~ ' group by record_kind').rows -%}
            {%- for row in rows -%}
                {%- do summary.records_by_kind.update({row[0]: row[1] | int}) -%}
                {%- if row[2] is not none and (summary.first_sequence is none or row[2] < summary.first_sequence) -%}
                    {%- do summary.update({'first_sequence': row[2]}) -%}
                {%- endif -%}
                {%- do summary.update({'partial_key_changes': summary.partial_key_changes + row[3] | int}) -%}
                {#- as JSON text: every target's driver returns it alike -#}
                {%- do summary.tables.extend(fromjson(row[4])) -%}
                {%- do summary.truncated_tables.extend(fromjson(row[5])) -%}
            {%- endfor -%}
            {%- do summary.update({'tables': summary.tables | unique | sort | list,
                'truncated_tables': summary.truncated_tables | unique | sort | list}) -%}
        {%- endif -%}
        {%- do known.update({'summary': summary}) -%}
    {%- endif -%}
    {{ return(known.summary) }}
{% endmacro %}
