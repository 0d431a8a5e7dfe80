{#
    Every format's canonical records in one relation, classified: op codes from seed
    cdc_op_codes, key columns resolved (message, then seed cdc_table_keys, under the test
    suite also seed cdc_test_table_keys, then the format's row locator columns), key_json
    built from the image, quarantine reasons decided. An update whose key changed becomes
    a delete of the old key and an insert of the new one; every other record keeps its
    own row.
#}
{#- an incremental run of int_cdc_records parses only the batches above the watermark: the formats
    that have some. A first build of int_cdc_records takes every format that landed; on a full
    refresh the watermark is -1, so every landed format is above it -#}
{%- set records_stored = cdc_previous_run_relation('int_cdc_records') is not none -%}
with unioned as (
    {% for source_format in cdc_landed_formats(above_watermark=records_stored) %}
        select * from {{ ref('stg_' ~ source_format ~ '__records') }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

op_codes as (
    select
        source_format,
        vendor_op,
        record_kind,
        op
    from {{ ref('cdc_op_codes') }}
),

configured_keys as (
    select
        table_id,
        from_json(key_columns, 'array<string>') as key_columns
    from {{ ref('cdc_table_keys') }}
    {%- if cdc_test_seeds_enabled() %}
        -- the test suite's tables (seeds/testing, enabled by env var CDC_TEST_SEEDS=true)
        union all
        select
            table_id,
            from_json(key_columns, 'array<string>') as key_columns
        from {{ ref('cdc_test_table_keys') }}
    {%- endif %}
),

format_settings as (
    {{ cdc_format_settings() }}
),

key_overrides as (
    {{ cdc_key_overrides() }}
),

-- each image cast to a map once (a cast re-encodes every value)
with_columns as (
    select
        unioned.*,
        cast(unioned.before_image as map <string, variant>) as before_columns,
        cast(unioned.after_image as map <string, variant>) as after_columns
    from unioned
),

classified as (
    select
        with_columns.*,
        op_codes.record_kind as op_record_kind,
        nullif(op_codes.op, 'none') as op,
        case
            when key_overrides.key_columns is not null then key_overrides.key_columns
            when size(with_columns.declared_key_columns) > 0 then with_columns.declared_key_columns
            when configured_keys.key_columns is not null then configured_keys.key_columns
            else slice(
                filter(
                    format_settings.row_locator_columns,
                    column_name -> map_contains_key(
                        coalesce(with_columns.after_columns, with_columns.before_columns), column_name
                    )
                ),
                1, 1
            )
        end as key_columns
    from with_columns
    left join op_codes
        on
            with_columns.source_format = op_codes.source_format
            and with_columns.vendor_op = op_codes.vendor_op
    left join configured_keys
        on with_columns.table_id = configured_keys.table_id
    left join format_settings
        on with_columns.source_format = format_settings.source_format
    left join key_overrides
        on with_columns.table_id = key_overrides.table_id
),

keyed as (
    select
        classified.*,
        -- A key value missing from one image is taken from the other: partial images
        -- (Canal `old`, SharePlex `data`) hold key columns only when they changed.
        case
            when classified.before_columns is not null then
                to_json(map_from_arrays(
                    classified.key_columns,
                    transform(
                        classified.key_columns,
                        column_name
                        -> coalesce(classified.before_columns[column_name], classified.after_columns[column_name])
                    )
                ))
        end as before_key_json,
        case
            when classified.after_columns is not null then
                to_json(map_from_arrays(
                    classified.key_columns,
                    transform(
                        classified.key_columns,
                        column_name
                        -> coalesce(classified.after_columns[column_name], classified.before_columns[column_name])
                    )
                ))
        end as after_key_json,
        filter(
            classified.key_columns,
            column_name
            -> not map_contains_key(coalesce(classified.after_columns, classified.before_columns), column_name)
            and not map_contains_key(coalesce(classified.before_columns, classified.after_columns), column_name)
        ) as absent_key_columns
    from classified
),

checked as (
    select
        keyed.*,
        case
            when keyed.format_error is not null then keyed.format_error
            when keyed.vendor_op is null then 'no operation in the message'
            when
                keyed.op_record_kind is null
                then concat('unknown operation ', to_json(named_struct('op', keyed.vendor_op)))
            when keyed.op_record_kind = 'row_change' and keyed.table_id is null then 'no table in the message'
            when keyed.op_record_kind = 'row_change' and keyed.sequence_key is null then 'no sequence in the message'
            when keyed.op_record_kind = 'row_change' and keyed.commit_ts is null then 'no commit time in the message'
            when keyed.op_record_kind = 'row_change' and keyed.before_columns is null and keyed.after_columns is null
                then 'no row image in the message'
            when
                keyed.op_record_kind = 'row_change'
                and keyed.op in ('insert', 'snapshot')
                and keyed.after_columns is null
                then 'no after image for an insert'
            when keyed.op_record_kind = 'row_change' and size(keyed.key_columns) = 0
                then 'no key: the message declares none, seed cdc_table_keys has none, no row locator column'
            when keyed.op_record_kind = 'row_change' and size(keyed.absent_key_columns) > 0
                then concat('key column absent from the row image: ', to_json(keyed.absent_key_columns))
            when keyed.op = 'truncate' and keyed.table_id is null then 'no table in the message'
        end as quarantine_reason
    from keyed
),

split as (
    -- one output row per (key, image): an update that changes the key ends the old key
    -- (delete) and starts the new one (insert)
    select
        checked.*,
        inline(  -- noqa: AL03
            case
                when
                    checked.quarantine_reason is null
                    and checked.op_record_kind = 'row_change'
                    and checked.op = 'update'
                    and checked.before_key_json is not null and checked.after_key_json is not null
                    and checked.before_key_json != checked.after_key_json
                    then array(
                        named_struct(
                            'record_op', 'delete', 'key_json', checked.before_key_json,
                            'record_before_image', checked.before_image, 'record_after_image', cast(null as variant),
                            'is_key_change', true
                        ),
                        named_struct(
                            'record_op', 'insert', 'key_json', checked.after_key_json,
                            'record_before_image', cast(null as variant), 'record_after_image', checked.after_image,
                            'is_key_change', true
                        )
                    )
                else array(named_struct(
                    'record_op', checked.op,
                    'key_json', case
                        when checked.quarantine_reason is null and checked.op_record_kind = 'row_change'
                            then coalesce(checked.after_key_json, checked.before_key_json)
                    end,
                    'record_before_image', checked.before_image, 'record_after_image', checked.after_image,
                    'is_key_change', false
                ))
            end
        )
    from checked
),

final as (
    select
        message_id,
        load_batch_id,
        source_format,
        record_index,
        case when quarantine_reason is not null then 'quarantine' else op_record_kind end as record_kind,
        vendor_op,
        case when quarantine_reason is null then record_op end as op,
        table_id,
        key_json,
        record_before_image as before_image,
        record_after_image as after_image,
        after_image_is_partial,
        column_types,
        sequence_key,
        commit_ts,
        ddl_text,
        is_key_change,
        quarantine_reason,
        -- copies of one record (a message landed twice) share it; hashing the landed text is
        -- far cheaper than rendering both images as JSON. 128 bits as 16 bytes: a SHA-256 hex
        -- string was 60% of this table's bytes at 2M messages, and of the events' shuffle
        unhex(md5(concat_ws(
            '\u0001', source_format, message_text, cast(record_index as string), record_op,
            case when quarantine_reason is not null then message_id end
        ))) as record_fingerprint,
        case when key_json is not null then {{ cdc_key_bucket('table_id', 'key_json') }} end as key_bucket
    from split
)

select * from final
