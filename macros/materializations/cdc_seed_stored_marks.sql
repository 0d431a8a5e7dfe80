{#
    What a seed's table says of its last load, from its table properties (one statement):
      fingerprint   the fingerprint it was loaded with (cdc.seed_fingerprint), none without one
                    (a table loaded otherwise)
      tested        {property: fingerprint} of each data test that passed on the rows loaded
                    with that fingerprint (cdc_seed_test_mark, written by the test materialization)
#}
{% macro cdc_seed_stored_marks(relation) %}
    {{ cdc_check_relation('cdc_seed_stored_marks', relation, 'the seed table') }}
    {%- set marks = {'fingerprint': none, 'tested': {}} -%}
    {#- all its properties: asked for one by name, Spark answers a missing one with a row saying so -#}
    {%- for row in run_query('show tblproperties ' ~ relation).rows -%}
        {%- if row[0] == 'cdc.seed_fingerprint' -%}
            {%- do marks.update({'fingerprint': row[1]}) -%}
        {%- elif row[0].startswith('cdc.seed_tested.') -%}
            {%- do marks.tested.update({row[0]: row[1]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(marks) }}
{% endmacro %}

{# The table property that records the fingerprint a seed's data test `test_id` last passed on. #}
{% macro cdc_seed_test_mark(test_id) %}
    {%- if test_id is not string or not test_id.startswith('test.') -%}
        {{ cdc_argument_error('cdc_seed_test_mark', 'test_id', "a data test's unique id", test_id) }}
    {%- endif -%}
    {{ return('cdc.seed_tested.' ~ local_md5(test_id)[:12]) }}
{% endmacro %}

{#
    The seeds this invocation's seed materialization saw: {unique id: {relation, fingerprint,
    unchanged, tested}} (tested as cdc_seed_stored_marks reads it), kept in the invocation's
    `graph`. A data test of an unchanged seed that passed on its rows before sends no query
    (cdc_run_scope_where); one that passes now is marked (test materialization).
#}
{% macro cdc_seed_states() %}
    {{ return(cdc_invocation_state('cdc_seed_states', {})) }}
{% endmacro %}

{#
    What this invocation knows of seed `seed_id` (a unique id), as cdc_seed_states holds it: from
    the seed materialization when the invocation runs the seed; in a build that runs the seed's
    tests without it (cdc-run's second step), read once from the seed's table (one `show
    tblproperties`), with `fingerprint` the one its rows were loaded with, `unchanged` whether
    that is its file's. None where nothing is known (a table loaded otherwise, or not a build).
#}
{% macro cdc_seed_state(seed_id) %}
    {%- set states = cdc_seed_states() -%}
    {%- set node = graph.nodes.get(seed_id) if execute and seed_id not in states
        and flags.WHICH == 'build' and var('cdc_test_scope', 'run') == 'run' else none -%}
    {%- if node is not none and node.resource_type == 'seed' -%}
        {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- set stored = cdc_seed_stored_marks(relation) if relation is not none and not relation.is_view
            else {'fingerprint': none} -%}
        {%- if stored.fingerprint is not none -%}
            {%- do states.update({seed_id: {
                'relation': relation | string, 'fingerprint': stored.fingerprint,
                'unchanged': stored.fingerprint == cdc_seed_fingerprint(node), 'tested': stored.tested}}) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(states.get(seed_id)) }}
{% endmacro %}

{#
    Whether data test `test_id`, which reads seed `seed_id`, has nothing new to check in this
    invocation: a build in the run scope that found the seed unchanged, whose table marks the test
    passed on `value` (the fingerprint its rows were loaded with, for a test of its rows only;
    more, for a test that also reads what is rendered into its SQL).
#}
{% macro cdc_seed_test_passed(test_id, seed_id, value) %}
    {%- set seed = cdc_seed_state(seed_id) -%}
    {{ return(flags.WHICH == 'build' and var('cdc_test_scope', 'run') == 'run'
        and seed is not none and seed.unchanged
        and seed.tested.get(cdc_seed_test_mark(test_id)) == value) }}
{% endmacro %}

{#
    The data tests not attached to a seed that read one (singular tests), with the value their
    mark holds: {test unique id: {'seed': seed unique id, 'value': ...}}, kept in the invocation's
    `graph`. Such a test registers itself while compiling (assert_format_ops_are_op_codes: the
    seed's fingerprint and the facts var cdc_formats renders into it); the test materialization
    marks the seed with that value when the test passes.
#}
{% macro cdc_seed_test_inputs() %}
    {{ return(cdc_invocation_state('cdc_seed_test_inputs', {})) }}
{% endmacro %}
