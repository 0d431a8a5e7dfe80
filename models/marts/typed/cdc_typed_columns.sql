{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        on_schema_change='fail',
    )
}}
{#
    The columns of each table in var cdc_typed_tables, as its envelopes declared them: one row
    per run of a declaration (the positions of a column, in sequence order, with one declared
    type; a type declared again after another starts a new run) and type of its values, with
    the first and last sequence position of the run. The typed models read this small table
    when they compile (cdc_typed_table_spec), so a column added upstream appears in them on the
    next build, a dropped one stays, and a type change is widened or reported where it began.
    A build sorts only its new positions with the ends of the stored runs: a late message
    inside a stored run splits it at the ends known.

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
{%- set seen_through = cdc_typed_columns_seen_through() if is_incremental() and execute else {} -%}
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
        records.row_columns[declared.source_column] as column_value,
        cast(null as string) as stored_value_type
    from records
        lateral view explode(records.source_columns) declared as source_column
),

{% if is_incremental() and watermarks -%}
-- the runs earlier builds stored, each as its first and last position (all that is known of it)
stored_ends as (
    select
        table_id,
        source_format,
        run_end as sequence_key,
        source_column,
        declared_type,
        cast(null as variant) as column_value,
        value_type as stored_value_type
    from {{ this }}
        lateral view explode(array_distinct(array(first_sequence, last_sequence))) ends as run_end
    where source_column is not null and table_id in ({{ watermarks.keys() | join(', ') }})
),
{%- endif %}

-- a run: the positions of a column in sequence order with one declaration; a re-declared type
-- starts a new run, so that a narrowing names where it began (cdc_typed_table_spec)
run_starts as (
    select
        positions.*,
        case
            when
                positions.declared_type is distinct from lag(positions.declared_type) over (
                    partition by positions.table_id, positions.source_column
                    order by positions.sequence_key, positions.declared_type
                )
                then 1
            else 0
        end as starts_run
    from (
        select * from observed
        {% if is_incremental() and watermarks -%}
            union all
            select * from stored_ends
        {%- endif %}
    ) as positions
),

runs as (
    select
        run_starts.*,
        sum(run_starts.starts_run) over (
            partition by run_starts.table_id, run_starts.source_column
            order by run_starts.sequence_key, run_starts.declared_type
            rows between unbounded preceding and current row
        ) as run_number
    from run_starts
),

-- per run and type of its values: a stored run keeps its values' type, this build's values
-- take theirs; where the two are the same type, the final step makes them one row
new_columns as (
    select
        table_id,
        source_column,
        max(source_format) as source_format,
        declared_type,
        coalesce(
            stored_value_type,
            lower(schema_of_variant_agg(if(is_variant_null(column_value), null, column_value)))
        ) as value_type,
        min(sequence_key) as first_sequence,
        max(sequence_key) as last_sequence,
        run_number
    from runs
    group by table_id, source_column, run_number, declared_type, stored_value_type
),

-- the newest batch read: every configured table has now been read through it
read_through as (
    select max(load_batch_id) as load_batch_id
    from {{ ref('int_cdc_records') }}
    where load_batch_id > {{ oldest_watermark }}{{ ' and false' if not table_ids }}
),

-- the runs and a row per configured table for its watermark
unioned as (
    select * from new_columns
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
            cast(null as string) as last_sequence,
            cast(null as bigint) as run_number
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
    group by unioned.table_id, unioned.source_column, unioned.run_number, unioned.declared_type, unioned.value_type
)

select * from final
