{#
    `carry` rows for cdc_history_fold, one per row of `key_changes` (table_id, to_key_json,
    sequence_key): the new key's row at the key change, `image`, as a full image the insert is
    folded onto. Columns in the order of cdc_history's changes.
#}
{% macro cdc_history_carry_rows(key_changes, image) %}
    {% if key_changes is not string or not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', key_changes) %}
        {{ cdc.cdc_argument_error('cdc_history_carry_rows', 'key_changes', 'the name of a CTE (it qualifies columns)', key_changes) }}
    {% endif %}
    {% if image is not string or not image | trim %}
        {{ cdc.cdc_argument_error('cdc_history_carry_rows', 'image', 'a SQL expression (a string)', image) }}
    {% endif %}
    {{ return(adapter.dispatch('cdc_history_carry_rows', 'cdc')(key_changes, image)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_history_carry_rows(key_changes, image) %}
    {{ cdc.cdc_unsupported_adapter('cdc_history_carry_rows') }}
{% endmacro %}

{% macro spark__cdc_history_carry_rows(key_changes, image) %}
    select
        cast(null as string) as event_id,
        cast(null as string) as source_format,
        {{ key_changes }}.table_id,
        {{ key_changes }}.to_key_json as key_json,
        'carry' as op,
        cast(null as variant) as before_image,
        {{ image }} as after_image,
        false as after_image_is_partial,
        {{ key_changes }}.sequence_key,
        cast(null as timestamp) as commit_ts,
        cast(null as int) as key_bucket,
        false as is_key_change,
        cast(null as timestamp) as valid_from_floor,
        false as is_prior,
        cast(null as int) as version_offset,
        cast(null as array<string>) as partial_image_columns
    from {{ key_changes }}
{% endmacro %}
