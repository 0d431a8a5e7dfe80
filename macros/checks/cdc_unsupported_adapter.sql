{#
    The default__ implementation of every macro that dispatches (adapter.dispatch): a compile
    error that names the macro and the adapter, instead of the SQL error another database would
    give on Spark's VARIANT SQL. The project's implementations are spark__ ones (dbt-databricks,
    whose dispatch falls back to spark__, uses them too).
#}
{% macro cdc_unsupported_adapter(macro_name) %}
    {%- if macro_name is not string or not macro_name -%}
        {{ cdc_argument_error('cdc_unsupported_adapter', 'macro_name', 'the name of the dispatching macro', macro_name) }}
    {%- endif -%}
    {{ exceptions.raise_compiler_error(
        macro_name ~ ": adapter '" ~ adapter.type() ~ "' is not supported: the macro's SQL needs Spark 4 "
        ~ "(VARIANT; the project's implementation is spark__" ~ macro_name ~ "). To support another "
        ~ "adapter, add a " ~ adapter.type() ~ "__" ~ macro_name ~ " macro.") }}
{% endmacro %}
