{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        on_schema_change='fail',
    )
}}
{#
    The columns of each table in var cdc_typed_tables, as its envelopes declared them: one row
    per (table, column, declared type, type of the values), with the first and last sequence
    position it was seen at. The typed models read this small table when they compile
    (cdc_typed_table_spec), so a column added upstream appears in them on the next build, a
    dropped one stays, and a type change is widened or reported.

    Each table keeps its own watermark (seen_through_batch_id), so this model may be left out
    of some builds (`--exclude path:models/marts/typed`) and catch up in the next: a run reads
    the records of batches above it, and every batch for a table added to the var. The table
    is small and rewritten whole, which also drops the tables no longer configured.
#}
{%- set table_ids = [] -%}
{%- for spec in (var('cdc_typed_tables', none) or {}).values() -%}
    {%- if spec.table_id is defined and spec.table_id not in table_ids -%}
        {%- do table_ids.append(spec.table_id) -%}
    {%- endif -%}
{%- endfor -%}
{%- set seen_through = {} -%}
{%- if is_incremental() and execute -%}
    {%- for row in run_query(
        'select table_id, max(seen_through_batch_id) from ' ~ this ~ ' group by table_id').rows -%}
        {%- do seen_through.update({row[0]: row[1] | int}) -%}
    {%- endfor -%}
{%- endif -%}
{#- per configured table: the batches it has not been read for (above its watermark; every batch
    for a table new to the var) and its watermark, when it has one -#}
{%- set unread = [] -%}
{%- set watermarks = {} -%}
{%- for table_id in table_ids -%}
    {%- if table_id in seen_through -%}
        {%- do watermarks.update({cdc_string_literal(table_id): seen_through[table_id]}) -%}
        {%- do unread.append('(table_id = ' ~ cdc_string_literal(table_id) ~ ' and load_batch_id > ' ~ seen_through[table_id] ~ ')') -%}
    {%- else -%}
        {%- do unread.append('table_id = ' ~ cdc_string_literal(table_id)) -%}
    {%- endif -%}
{%- endfor -%}
{%- set oldest_watermark = watermarks.values() | min
    if watermarks and watermarks | length == unread | length else -1 -%}
with records as (
    select
        table_id,
        source_format,
        sequence_key,
        column_types,
        cast(coalesce(after_image, before_image) as map <string, variant>) as row_columns,
        -- a format that declares its columns names them all (a value may be absent: a partial
        -- image); elsewhere the image's columns are what is known
        coalesce(map_keys(column_types), map_keys(row_columns)) as source_columns
    from {{ ref('int_cdc_records') }}
    where
        record_kind = 'row_change'
        and op is not null
        and ({{ unread | join(' or ') if unread else 'false' }})
),

observed as (
    select
        records.table_id,
        records.source_format,
        records.sequence_key,
        declared.source_column,
        records.column_types[declared.source_column] as declared_type,
        records.row_columns[declared.source_column] as column_value
    from records
        lateral view explode(records.source_columns) declared as source_column
),

new_columns as (
    select
        table_id,
        source_column,
        max(source_format) as source_format,
        declared_type,
        lower(schema_of_variant_agg(if(is_variant_null(column_value), null, column_value))) as value_type,
        min(sequence_key) as first_sequence,
        max(sequence_key) as last_sequence
    from observed
    group by table_id, source_column, declared_type
),

-- the newest batch read: every configured table has now been read through it
read_through as (
    select max(load_batch_id) as load_batch_id
    from {{ ref('int_cdc_records') }}
    where load_batch_id > {{ oldest_watermark }}{{ ' and false' if not table_ids }}
),

-- what this run read, what earlier runs stored (the same columns, in the same order) and a row
-- per table for its watermark
unioned as (
    select * from new_columns
    {% if is_incremental() %}
        union all
        select * except (seen_through_batch_id) from {{ this }}
        where {{ ('table_id in (' ~ watermarks.keys() | join(', ') ~ ')') if watermarks else 'false' }}
    {% endif %}
    {% for table_id in table_ids %}
        -- one row with no column per configured table: it has been read (its watermark)
        union all
        select
            {{ cdc_string_literal(table_id) }} as table_id,
            cast(null as string) as source_column,
            cast(null as string) as source_format,
            cast(null as string) as declared_type,
            cast(null as string) as value_type,
            cast(null as string) as first_sequence,
            cast(null as string) as last_sequence
    {% endfor %}
),

final as (
    select
        unioned.table_id,
        unioned.source_column,
        max(unioned.source_format) as source_format,
        unioned.declared_type,
        unioned.value_type,
        min(unioned.first_sequence) as first_sequence,
        max(unioned.last_sequence) as last_sequence,
        greatest(
            coalesce(max(read_through.load_batch_id), -1),
            {% if watermarks -%}
                case unioned.table_id
                    {%- for table_literal, watermark in watermarks.items() %}
                        when {{ table_literal }} then {{ watermark }}
                    {%- endfor %}
                    else -1
                end
            {%- else -%}
                -1
            {%- endif %}
        ) as seen_through_batch_id
    from unioned
    cross join read_through
    group by unioned.table_id, unioned.source_column, unioned.declared_type, unioned.value_type
)

select * from final
