{#
    The data tests of this invocation whose scope is empty (their `where` is `false` once
    cdc_run_scope_where replaced its placeholders, or a singular test found, compiling, that
    nothing can fail: assert_no_versions_removed_before_landing without a Kafka gap): a list of
    unique ids, kept in the invocation's `graph`. spark__get_where_subquery adds a test as it
    compiles it; the test materialization then sends no query for it.
#}
{% macro cdc_empty_test_scopes() %}
    {{ return(cdc_invocation_state('cdc_empty_test_scopes', [])) }}
{% endmacro %}
