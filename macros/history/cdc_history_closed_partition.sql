{#
    The cdc_history partition of the versions a run closes: the UTC day of the run's newest
    landing batch, as the batch id (microseconds since the epoch) of that day's start. One
    partition a day, not one a run: a runner's cycles would otherwise add a partition (and a
    file) each, without bound, where a day's files are compacted together
    (cdc_compact_history). `batch` is that batch: a whole number, or a SQL expression of one;
    none for a run that closes nothing.
#}
{% macro cdc_history_closed_partition(batch) %}
    {%- set day = 86400000000 -%}
    {%- if batch is none -%}
        {#- a run that closes nothing (no touched key) -#}
        {{ return(none) }}
    {%- elif batch is integer -%}
        {{ return(batch // day * day) }}
    {%- elif batch is string and batch | trim -%}
        {{ return('(' ~ batch ~ ') div ' ~ day ~ ' * ' ~ day) }}
    {%- endif -%}
    {{ cdc_argument_error('cdc_history_closed_partition', 'batch', 'a landing batch id (whole number) or a SQL expression of one', batch) }}
{% endmacro %}
