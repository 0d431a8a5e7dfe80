{#
    DTS "Shareplex Json" (source document 002) -> canonical CDC records, one per message.
    `meta` holds the operation (`op`), table (OWNER.TABLE), position (`scn`, `trans`,
    `seq`) and Oracle `rowid`; `data` the row: the full row for inserts and deletes,
    only the changed columns for updates, whose `key` object holds the before values.
    Ordering: scn, then trans (USN.SLOT.SQN, each part compared as a number), then seq,
    all as numbers. meta.rowid is added to the images as column `rowid`, the row
    locator used when seed cdc_table_keys names no key for the table.
#}
{% macro flatten_shareplex_json(relation) %}
    {{ cdc_check_relation('flatten_shareplex_json', relation, "the landing relation, e.g. source('cdc_landing', 'raw_cdc_messages')") }}
    {{ return(adapter.dispatch('flatten_shareplex_json', 'cdc')(relation)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__flatten_shareplex_json(relation) %}
    {{ cdc_unsupported_adapter('flatten_shareplex_json') }}
{% endmacro %}

{% macro spark__flatten_shareplex_json(relation) %}
{#- where each op's `data` goes (var cdc_formats, shareplex_json.ops): the row after (inserts),
    the changed columns after (updates), the row before -#}
{%- set ops = cdc_format_ops('shareplex_json', ['data_is_after', 'data_is_changed_columns', 'data_is_before']) -%}
{%- set insert_list = cdc_string_list(ops['data_is_after']) -%}
{%- set update_list = cdc_string_list(ops['data_is_changed_columns']) -%}
{%- set before_list = cdc_string_list(ops['data_is_before']) -%}
with landed as (
    {{ cdc_landed_messages(relation, 'shareplex_json') }}
),

fields as (
    select
        landed.*,
        try_variant_get(message, '$.meta') as meta,
        try_variant_get(message, '$.data') as data_columns,
        try_variant_get(message, '$.key') as key_columns,
        try_variant_get(message, '$.meta.op', 'string') as vendor_op,
        nullif(trim(try_variant_get(message, '$.meta.table', 'string')), '') as table_name,
        nullif(trim(try_variant_get(message, '$.meta.rowid', 'string')), '') as row_id,
        trim(try_variant_get(message, '$.meta.scn', 'string')) as scn,
        trim(try_variant_get(message, '$.meta.trans', 'string')) as trans,
        -- seq, or the first half of idx ("seq/size") when seq is missing
        coalesce(
            trim(try_variant_get(message, '$.meta.seq', 'string')),
            trim(split_part(try_variant_get(message, '$.meta.idx', 'string'), '/', 1))
        ) as seq,
        try_variant_get(message, '$.meta.seq') is null as seq_from_idx,
        trim(try_variant_get(message, '$.meta.time', 'string')) as commit_time,
        -- JSON types of the text fields (VOID: JSON null, null: absent), to name a wrong one
        schema_of_variant(try_variant_get(message, '$.meta.op')) as op_type,
        schema_of_variant(try_variant_get(message, '$.meta.table')) as table_type,
        schema_of_variant(try_variant_get(message, '$.meta.time')) as time_type
    from landed
),

positioned as (
    select
        fields.*,
        case
            when trans rlike '^[0-9]+([.][0-9]+)*$'
                then array_join(transform(split(trans, '[.]'), part -> {{ cdc_sortable_number('part', 20) }}), '.')
        end as trans_key,
        -- meta.rowid joins each image as column `rowid` (unless the row has one)
        case
            when {{ cdc_is_object('data_columns') }} then
                case
                    when row_id is null or map_contains_key(cast(data_columns as map<string, variant>), 'rowid')
                        then data_columns
                    else to_variant_object(map_concat(
                        cast(data_columns as map<string, variant>), map('rowid', cast(row_id as variant))
                    ))
                end
        end as data_image,
        case
            when {{ cdc_is_object('key_columns') }} then
                case
                    when row_id is null or map_contains_key(cast(key_columns as map<string, variant>), 'rowid')
                        then key_columns
                    else to_variant_object(map_concat(
                        cast(key_columns as map<string, variant>), map('rowid', cast(row_id as variant))
                    ))
                end
        end as key_image
    from fields
),

-- An update's after image: the before values in `key` overlaid with the changed columns in
-- `data` (a column missing from `data` did not change; a JSON null in it is a new null value).
imaged as (
    select
        positioned.*,
        case
            when key_image is null then data_image
            when data_image is not null then to_variant_object(map_zip_with(
                cast(key_image as map<string, variant>),
                cast(data_image as map<string, variant>),
                (column_name, before_value, changed_value) -> coalesce(changed_value, before_value)
            ))
        end as update_image,
        -- meta.time is UTC, with or without the trailing Z
        case
            when time_type = 'STRING'
                then try_cast(concat(regexp_replace(commit_time, 'Z$', ''), '+00:00') as timestamp)
        end as commit_ts
    from positioned
),

final as (
    select
        message_id,
        message_text,
        load_batch_id,
        source_format,
        0 as record_index,
        vendor_op,
        table_name as table_id,
        cast(null as array<string>) as declared_key_columns,
        case
            when vendor_op in ({{ before_list }}) then data_image
            when vendor_op in ({{ update_list }}) then key_image
        end as before_image,
        case
            when vendor_op in ({{ insert_list }}) then data_image
            when vendor_op in ({{ update_list }}) then update_image
        end as after_image,
        coalesce(vendor_op in ({{ update_list }}), false) as after_image_is_partial,
        cast(null as map<string, string>) as column_types,
        case
            when
                {{ cdc_sortable_number('scn') }} is not null
                and trans_key is not null
                and {{ cdc_sortable_number('seq', 20) }} is not null
                then concat_ws('/', {{ cdc_sortable_number('scn') }}, trans_key, {{ cdc_sortable_number('seq', 20) }})
        end as sequence_key,
        commit_ts,
        cast(null as string) as ddl_text,
        case
            when loader_error is not null then loader_error
            when message is null then {{ cdc_unparsed_reason() }}
            when not {{ cdc_is_object('message') }} then 'message is not a JSON object'
            when {{ cdc_is_not_object('meta') }} then 'meta is not a JSON object'
            when {{ cdc_is_not_object('data_columns') }} then 'data is not a JSON object'
            when {{ cdc_is_not_object('key_columns') }} then 'key is not a JSON object'
            when op_type not in ('STRING', 'VOID') then 'meta.op is not a string'
            when table_type not in ('STRING', 'VOID') then 'meta.table is not a string'
            when vendor_op in ({{ insert_list }}) and data_image is null then 'insert without data (the row)'
            when vendor_op in ({{ update_list }}) and data_image is null
                then 'update without data (its changed columns)'
            when vendor_op in ({{ before_list }}) and data_image is null then 'delete without data (the row before)'
            when scn is not null and {{ cdc_sortable_number('scn') }} is null then 'meta.scn is not a whole number'
            when trans is not null and trans_key is null then 'meta.trans is not dot-separated whole numbers'
            when seq is not null and {{ cdc_sortable_number('seq', 20) }} is null and seq_from_idx
                then 'meta.idx is not "seq/size" (whole numbers)'
            when seq is not null and {{ cdc_sortable_number('seq', 20) }} is null then 'meta.seq is not a whole number'
            when time_type not in ('STRING', 'VOID') or (commit_time is not null and commit_ts is null)
                then 'meta.time is not a UTC time (yyyy-MM-ddTHH:mm:ssZ)'
        end as format_error
    from imaged
)

select * from final
{% endmacro %}
