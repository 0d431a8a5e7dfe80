{# `where` with each scope placeholder replaced by its condition on `relation`. #}
{% macro cdc_run_scope_where(where, relation) %}
    {%- if where is not string or not where | trim -%}
        {{ cdc_argument_error('cdc_run_scope_where', 'where', "a data test's where config (non-empty string)", where) }}
    {%- endif -%}
    {{ cdc_check_relation('cdc_run_scope_where', relation, 'the tested relation') }}
    {%- set known = ['__cdc_run_batches__', '__cdc_run_keys__', '__cdc_run_messages__', '__cdc_run_wrote__'] -%}
    {%- for placeholder in modules.re.findall('__cdc_run_[a-z]+__', where) if placeholder not in known -%}
        {{ exceptions.raise_compiler_error(
            "unknown test scope placeholder " ~ placeholder ~ " in `where: " ~ where ~ "`; known: " ~ known | join(', ')
        ) }}
    {%- endfor -%}
    {%- set in_batches = cdc_run_batches_condition() -%}
    {%- set every_row = in_batches == 'true' -%}
    {#- in a build, a model of records of some kinds (config cdc_record_kinds) whose kinds the
        run's batches hold none of wrote nothing (the incremental materialization): nothing to check -#}
    {%- if flags.WHICH == 'build' and not every_row and in_batches != 'false' -%}
        {%- set tested = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
            | selectattr('relation_name', 'equalto', relation | string) | list -%}
        {%- set record_kinds = tested[0].config.get('cdc_record_kinds') if tested else none -%}
        {%- if record_kinds is not none and cdc_no_new_records_of(record_kinds) -%}
            {%- set in_batches = 'false' -%}
        {%- endif -%}
    {%- endif -%}
    {#- a run of no batches changed no key and no message: a literal, so that Spark plans the
        test's scan as empty (a subquery under `or` is a join it runs over the whole table) -#}
    {%- if in_batches == 'false' -%}
        {{ return(where | replace('__cdc_run_batches__', 'false') | replace('__cdc_run_keys__', 'false')
            | replace('__cdc_run_messages__', 'false') | replace('__cdc_run_wrote__', 'false')) }}
    {%- endif -%}
    {%- if '__cdc_run_keys__' in where -%}
        {#- not ref(): dbt resolves a test's refs before its `where`; the tested models are
            downstream of int_cdc_records, so it is built before them -#}
        {%- set records = graph.nodes['model.' ~ project_name ~ '.int_cdc_records'].relation_name -%}
        {%- set in_keys -%}
            ((table_id, key_json) in (
                select table_id, key_json from {{ records }} where {{ in_batches }} and key_json is not null
            )
            or table_id in (
                select table_id from {{ records }} where {{ in_batches }} and op = 'truncate' and key_json is null
            ))
        {%- endset -%}
        {%- set where = where | replace('__cdc_run_keys__', 'true' if every_row else in_keys) -%}
    {%- endif -%}
    {%- set in_messages = 'message_id in (select message_id from ' ~ relation ~ ' where ' ~ in_batches ~ ')' -%}
    {{ return(where
        | replace('__cdc_run_wrote__', 'true')
        | replace('__cdc_run_batches__', in_batches)
        | replace('__cdc_run_messages__', 'true' if every_row else in_messages)) }}
{% endmacro %}
