{# The condition on `column` that selects the latest run's batches (cdc_run_batches). #}
{% macro cdc_run_batches_condition(column='load_batch_id') %}
    {%- if column is not string or not column | trim -%}
        {{ cdc_argument_error('cdc_run_batches_condition', 'column', 'a column name or SQL expression (non-empty string)', column) }}
    {%- endif -%}
    {%- set batches = cdc_run_batches() -%}
    {%- if batches is none -%}
        {{ return('true') }}
    {%- endif -%}
    {{ return(column ~ ' in (' ~ batches | join(', ') ~ ')' if batches else 'false') }}
{% endmacro %}
