{#
    DataHub TUPLE topic (source document 000) -> canonical CDC records, one per row.
    A message is one flat JSON object: the source row's columns plus DataWorks'
    metadata columns, which are read here and never leak into the row image.
    `_before_image_` / `_after_image_` (Y/N) say whether the row is a before or an
    after image; an update is two rows sharing one `_sequence_id_`, merged downstream.
    Ordering: `_sequence_id_`, compared as a number. The message carries no key and
    no column types: keys come from seed cdc_table_keys, values keep their JSON type.
#}
{% macro flatten_datahub_tuple(relation) %}
    {{ cdc_check_relation('flatten_datahub_tuple', relation, "the landing relation, e.g. source('cdc_landing', 'raw_cdc_messages')") }}
    {{ return(adapter.dispatch('flatten_datahub_tuple', 'cdc')(relation)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__flatten_datahub_tuple(relation) %}
    {{ cdc_unsupported_adapter('flatten_datahub_tuple') }}
{% endmacro %}

{% macro spark__flatten_datahub_tuple(relation) %}
{#- op facts (var cdc_formats, datahub_tuple.ops): the insert and delete, whose row is an after and
    a before image when the flags are missing -#}
{%- set ops = cdc_format_ops('datahub_tuple', ['insert', 'delete']) -%}
{%- set metadata_columns = [
    '_sequence_id_', '_operation_type_', '_excute_time_',
    '_source_table_', '_before_image_', '_after_image_',
] -%}
with landed as (
    {{ cdc_landed_messages(relation, 'datahub_tuple') }}
),

fields as (
    select
        landed.*,
        try_variant_get(message, '$._operation_type_', 'string') as operation_type,
        trim(try_variant_get(message, '$._sequence_id_', 'string')) as sequence_id,
        trim(try_variant_get(message, '$._excute_time_', 'string')) as execute_time,
        nullif(trim(try_variant_get(message, '$._source_table_', 'string')), '') as source_table,
        upper(trim(try_variant_get(message, '$._before_image_', 'string'))) as before_flag,
        upper(trim(try_variant_get(message, '$._after_image_', 'string'))) as after_flag,
        -- JSON types of the text fields (VOID: JSON null, null: absent), to name a wrong one
        schema_of_variant(try_variant_get(message, '$._operation_type_')) as operation_type_type,
        schema_of_variant(try_variant_get(message, '$._source_table_')) as source_table_type,
        schema_of_variant(try_variant_get(message, '$._excute_time_')) as execute_time_type,
        case
            when {{ cdc_is_object('message') }} then
                to_variant_object(map_filter(
                    cast(message as map<string, variant>),
                    (column_name, column_value) -> not array_contains(
                        array({% for column in metadata_columns %}'{{ column }}'{% if not loop.last %}, {% endif %}{% endfor %}),
                        column_name
                    )
                ))
        end as row_columns
    from landed
),

timed as (
    select
        fields.*,
        -- 13 digits: epoch milliseconds (the document's samples); 16: DataHub TIMESTAMP microseconds
        case
            when execute_time rlike '^[0-9]{1,13}$' then timestamp_millis(cast(execute_time as bigint))
            when execute_time rlike '^[0-9]{14,16}$' then timestamp_micros(cast(execute_time as bigint))
            else try_cast(execute_time as timestamp)
        end as commit_ts
    from fields
),

final as (
    select
        message_id,
        message_text,
        load_batch_id,
        source_format,
        0 as record_index,
        operation_type as vendor_op,
        source_table as table_id,
        cast(null as array<string>) as declared_key_columns,
        -- without flags, I is an after image and D a before image
        case
            when coalesce(before_flag, if(operation_type = {{ cdc_string_literal(ops['delete']) }}, 'Y', 'N')) = 'Y' then row_columns
        end as before_image,
        case
            when coalesce(after_flag, if(operation_type = {{ cdc_string_literal(ops['insert']) }}, 'Y', 'N')) = 'Y' then row_columns
        end as after_image,
        false as after_image_is_partial,
        cast(null as map<string, string>) as column_types,
        {{ cdc_sortable_number('sequence_id') }} as sequence_key,
        commit_ts,
        cast(null as string) as ddl_text,
        case
            when loader_error is not null then loader_error
            when message is null then {{ cdc_unparsed_reason() }}
            when not {{ cdc_is_object('message') }} then 'message is not a JSON object'
            when operation_type_type not in ('STRING', 'VOID') then '_operation_type_ is not a string'
            when source_table_type not in ('STRING', 'VOID') then '_source_table_ is not a string'
            when sequence_id is not null and {{ cdc_sortable_number('sequence_id') }} is null
                then '_sequence_id_ is not a whole number'
            when execute_time_type != 'VOID' and commit_ts is null
                then '_excute_time_ is neither epoch milliseconds nor a timestamp'
            when before_flag not in ('Y', 'N') then '_before_image_ is neither Y nor N'
            when after_flag not in ('Y', 'N') then '_after_image_ is neither Y nor N'
            when before_flag = 'N' and after_flag = 'N' then 'neither _before_image_ nor _after_image_ is Y'
            when operation_type = {{ cdc_string_literal(ops['delete']) }} and before_flag = 'N' then 'a delete (D) whose _before_image_ is N'
        end as format_error
    from timed
)

select * from final
{% endmacro %}
