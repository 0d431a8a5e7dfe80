{#
    Whether the test suite's seeds (seeds/testing/) are enabled: env var CDC_TEST_SEEDS=true,
    which tests/python/conftest.py sets and a user's build does not. dbt_project.yml enables
    the seeds with the same test (it cannot call a macro).
#}
{% macro cdc_test_seeds_enabled() %}
    {{ return(env_var('CDC_TEST_SEEDS', 'false') == 'true') }}
{% endmacro %}
