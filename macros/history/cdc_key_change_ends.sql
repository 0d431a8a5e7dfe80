{#
    Each partial key change (int_cdc_key_changes) seen from both of its keys: table_id,
    key_json, other_key_json, sequence_key. A key touched at or before the change touches the
    other key from its position.
#}
{% macro cdc_key_change_ends() %}
    select
        key_changes.table_id,
        key_change_end.key_json,
        key_change_end.other_key_json,
        key_changes.sequence_key
    from {{ ref('int_cdc_key_changes') }} as key_changes
    lateral view inline(array(
        named_struct('key_json', key_changes.from_key_json, 'other_key_json', key_changes.to_key_json),
        named_struct('key_json', key_changes.to_key_json, 'other_key_json', key_changes.from_key_json)
    )) key_change_end as key_json, other_key_json
{% endmacro %}
