{# `where` with each scope placeholder replaced by its condition on `relation`. #}
{% macro cdc_run_scope_where(where, relation) %}
    {%- if where is not string or not where | trim -%}
        {{ cdc_argument_error('cdc_run_scope_where', 'where', "a data test's where config (non-empty string)", where) }}
    {%- endif -%}
    {{ cdc_check_relation('cdc_run_scope_where', relation, 'the tested relation') }}
    {%- set known = [
        '__cdc_run_batches__', '__cdc_run_keys__', '__cdc_run_messages__', '__cdc_run_wrote__', '__cdc_run_whole__',
    ] -%}
    {%- for placeholder in modules.re.findall('__cdc_run_[a-z]+__', where) if placeholder not in known -%}
        {{ exceptions.raise_compiler_error(
            "unknown test scope placeholder " ~ placeholder ~ " in `where: " ~ where ~ "`; known: " ~ known | join(', ')
        ) }}
    {%- endfor -%}
    {%- set tested = graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'seed'])
        | selectattr('relation_name', 'equalto', relation | string) | first -%}
    {#- a seed was written, or not, whatever the batches: in a build that found it unchanged
        (the seed materialization), this test has nothing new to check if it passed on its rows -#}
    {%- if tested is defined and tested.resource_type == 'seed' -%}
        {%- set seed = cdc_seed_state(tested.unique_id) -%}
        {%- set wrote = seed is none or not cdc_seed_test_passed(model.unique_id, tested.unique_id, seed.fingerprint) -%}
        {%- set where = where | replace('__cdc_run_wrote__', 'true' if wrote else 'false') -%}
        {%- if '__cdc_run_' in where -%}
            {{ exceptions.raise_compiler_error(
                "a seed's data test can only be scoped __cdc_run_wrote__ (a seed has no batches nor keys); got `where: "
                ~ where ~ "` on " ~ relation) }}
        {%- endif -%}
        {{ return(where) }}
    {%- endif -%}
    {%- set in_batches = cdc_run_batches_condition() -%}
    {%- set every_row = in_batches == 'true' -%}
    {#- in a build, a model that wrote nothing (cdc_models_writing_nothing: no record of its
        kinds, or a query it knew empty) has nothing to check -#}
    {%- if flags.WHICH == 'build' and not every_row and in_batches != 'false'
        and tested is defined and tested.unique_id in cdc_models_writing_nothing() -%}
        {%- set in_batches = 'false' -%}
    {%- endif -%}
    {#- a run of no batches changed no key and no message: a literal, so that Spark plans the
        test's scan as empty (a subquery under `or` is a join it runs over the whole table) -#}
    {%- if in_batches == 'false' -%}
        {{ return(where | replace('__cdc_run_batches__', 'false') | replace('__cdc_run_keys__', 'false')
            | replace('__cdc_run_messages__', 'false') | replace('__cdc_run_wrote__', 'false')
            | replace('__cdc_run_whole__', 'false')) }}
    {%- endif -%}
    {%- if '__cdc_run_keys__' in where -%}
        {#- not ref(): dbt resolves a test's refs before its `where`; the tested models are
            downstream of int_cdc_records, so it is built before them -#}
        {%- set records = graph.nodes['model.' ~ project_name ~ '.int_cdc_records'].relation_name -%}
        {#- a typed table's model (config meta cdc_typed_table, set by cdc_typed_history) holds one
            source table and no table_id column: the run's keys of that table, none in a build
            whose new batches hold no record of it. A build knows what its new batches hold without
            a query (cdc_new_records_summary, read once per build): which tables it truncates is a
            literal list there (none, mostly), where `dbt test` reads them from the records -#}
        {%- set typed_table = (tested.config.meta or {}).get('cdc_typed_table') if tested is defined else none -%}
        {%- set typed_spec = (var('cdc_typed_tables', none) or {}).get(typed_table) if typed_table else none -%}
        {%- set summary = cdc_new_records_summary(cdc_batch_watermark())
            if flags.WHICH == 'build' and not every_row else none -%}
        {%- if every_row or (summary and typed_spec and typed_spec.table_id in summary.truncated_tables) -%}
            {%- set in_keys = 'true' -%}
        {%- elif summary and typed_spec and typed_spec.table_id not in summary.tables -%}
            {%- set in_keys = 'false' -%}
        {%- else -%}
            {#- the relation's keys among the run's, and any table the run truncates; a typed
                table's rows are all of its one table, named by a literal (not truncated here when
                the summary is known: that is every key, above) -#}
            {%- set table_id = cdc_string_literal(typed_spec.table_id) if typed_spec else 'table_id' -%}
            {%- set key_columns = 'key_json' if typed_spec else 'table_id, key_json' -%}
            {%- if summary is none -%}
                {%- set truncated = table_id ~ ' in (select table_id from ' ~ records ~ ' where ' ~ in_batches
                    ~ " and op = 'truncate' and key_json is null)" -%}
            {%- elif summary.truncated_tables and not typed_spec -%}
                {%- set truncated = 'table_id in (' ~ cdc_string_list(summary.truncated_tables) ~ ')' -%}
            {%- else -%}
                {%- set truncated = none -%}
            {%- endif -%}
            {%- set in_keys -%}
                ({{ key_columns if typed_spec else '(' ~ key_columns ~ ')' }} in (
                    select {{ key_columns }} from {{ records }}
                    where {{ in_batches }} and key_json is not null
                    {%- if typed_spec %} and table_id = {{ table_id }}{% endif %}
                )
                {%- if truncated %}
                or {{ truncated }}
                {%- endif %})
            {%- endset -%}
        {%- endif -%}
        {%- set where = where | replace('__cdc_run_keys__', in_keys) -%}
    {%- endif -%}
    {#- a test whose meta names a message id column (cdc_run_message_range) checks, of those rows,
        the ones whose id lies between the least and greatest of the run's batches (or is null):
        every row of the run's batches, or sharing an id with them, does, and a literal range lets
        Delta skip the files of other messages (a scan of every landed id otherwise). The range
        then stands for __cdc_run_messages__ too: no second scan of the table for the run's ids -#}
    {%- set message_range = none -%}
    {%- set range_column = (config.get('meta') or {}).get('cdc_run_message_range') -%}
    {%- if range_column and flags.WHICH == 'build' and not every_row -%}
        {%- set run_batches = cdc_run_batches() or [] -%}
        {%- set ranges = cdc_landed_partitions() | selectattr('load_batch_id', 'in', run_batches) | list -%}
        {%- if ranges and not (ranges | selectattr('first_message_id', 'none') | list) -%}
            {%- set column = cdc_quote_identifier(range_column) -%}
            {%- set message_range = '(' ~ column ~ ' between ' ~ cdc_string_literal(ranges | map(attribute='first_message_id') | min)
                ~ ' and ' ~ cdc_string_literal(ranges | map(attribute='last_message_id') | max) ~ ' or '
                ~ column ~ ' is null)' -%}
        {%- endif -%}
    {%- endif -%}
    {%- set in_messages = 'message_id in (select message_id from ' ~ relation ~ ' where ' ~ in_batches ~ ')' -%}
    {%- set where = where
        | replace('__cdc_run_wrote__', 'true')
        | replace('__cdc_run_whole__', 'true' if every_row else 'false')
        | replace('__cdc_run_batches__', in_batches)
        | replace('__cdc_run_messages__', 'true' if every_row or message_range else in_messages) -%}
    {%- if message_range -%}
        {%- set where = message_range ~ ' and (' ~ where ~ ')' -%}
    {%- endif -%}
    {#- a test whose meta names a sequence column (cdc_run_from) checks, of those rows, the ones at or
        after the first position the build's new batches hold (or with none): a build writes no
        change before it, and a literal bound lets Delta skip the files of older rows -#}
    {%- set from_column = (config.get('meta') or {}).get('cdc_run_from') -%}
    {%- if from_column and flags.WHICH == 'build' and not every_row -%}
        {%- set first = cdc_new_records_summary(cdc_batch_watermark()).first_sequence -%}
        {%- if first is not none -%}
            {%- set column = cdc_quote_identifier(from_column) -%}
            {%- set where = '(' ~ column ~ ' >= ' ~ cdc_string_literal(first) ~ ' or ' ~ column ~ ' is null) and ('
                ~ where ~ ')' -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(where) }}
{% endmacro %}
