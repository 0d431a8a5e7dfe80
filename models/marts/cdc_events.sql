{{
    config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['load_batch_id'],
    )
}}
-- depends_on: {{ ref('stg_cdc_previous_run__load_batches') }}
{#
    One row per row-level change, deduplicated. Records of one key at one sequence
    position are one change: DataWorks' UPDATE_BEFOR + UPDATE_AFTER pair, a record
    landed twice. A before image alone at a position means the row left this key
    (a delete, or the old side of a key change). In the formats whose positions can tie
    (var cdc_formats, `positions_can_tie`: Canal gives every flat message of a batch the
    batch's `id`, and `es` has whole seconds) different records at one position are
    separate changes, ordered as they were landed: landing batch, file, message in the
    file, row in the message. The second and later get their position, a space and a
    six-digit tie rank as sequence_key: a space sorts below every character a position
    holds, so this sorts after the position and before every later one. Truncates are
    table-wide rows with no key. A change is stored in the partition of the batch that
    first landed it.

    An incremental run reads the new batches' records, plus the records of earlier
    batches at the same positions (found with a narrow scan, see
    cdc_events_rework_batches), and rewrites only the partitions of those batches.
#}
{%- set incremental = is_incremental() -%}
{%- set watermark = cdc_batch_watermark() if incremental else -1 -%}
{%- set rework_batches = cdc_events_rework_batches(watermark) if incremental else [] -%}
{#- the landed formats whose positions can tie: their ties are ranked. When none has landed,
    tie_rank is a constant, which leaves the grouping by position in the window's order (no
    second sort of every record) -#}
{#- a tie rank is written after its position as a space and this many digits -#}
{%- set tie_rank_digits = 6 -%}
{%- set tie_formats = [] -%}
{%- for name in cdc_landed_formats() if name in cdc_formats_with('positions_can_tie') -%}
    {%- do tie_formats.append(cdc_string_literal(name)) -%}
{%- endfor -%}
with records as (
    select
        record_fingerprint,
        message_id,
        load_batch_id,
        source_format,
        record_index,
        op,
        table_id,
        key_json,
        before_image,
        after_image,
        after_image_is_partial,
        column_types,
        sequence_key,
        commit_ts,
        is_key_change,
        key_bucket
    from {{ ref('int_cdc_records') }}
    where
        record_kind in ('row_change', 'ddl')
        and op is not null
    {% if incremental %}
            and (
                {{ cdc_new_batches(watermark) }}
                {% if rework_batches %}
                    or load_batch_id in ({{ rework_batches | join(', ') }})
                {% endif %}
            )
        {% endif %}
),

{% if incremental %}
    -- the positions the new batches change; earlier records there are merged with them
    new_positions as (
        select distinct
            table_id,
            key_json,
            sequence_key
        from records
        where {{ cdc_new_batches(watermark) }}
    ),

    records_in_scope as (
        select records.*
        from records
        left semi join new_positions
            on
                records.table_id = new_positions.table_id
                and records.key_json <=> new_positions.key_json
                and records.sequence_key = new_positions.sequence_key
    ),
{% else %}
    records_in_scope as (
        select * from records
    ),
{% endif %}

-- The same record landed twice (or in two batches) is one record: its first landed copy.
-- Different records at one position are numbered as they were landed (tie_rank; message_id
-- is format:file hash:message index). One window over the position, which the grouping by
-- position below shares (no second shuffle); a position holds one or two records, so the
-- fingerprints seen before each are a short list.
unique_records as (
    select
        * except (earlier_fingerprints),
        if(
            source_format in ({{ (tie_formats or ["''"]) | join(', ') }}),
            size(earlier_fingerprints) + 1,
            1
        ) as tie_rank
    from (
        select
            records_in_scope.*,
            collect_set(records_in_scope.record_fingerprint)
                over (
                    partition by records_in_scope.table_id, records_in_scope.key_json, records_in_scope.sequence_key
                    order by
                        records_in_scope.load_batch_id,
                        substring_index(records_in_scope.message_id, ':', 2),
                        cast(substring_index(records_in_scope.message_id, ':', -1) as bigint),
                        records_in_scope.record_index
                    rows between unbounded preceding and 1 preceding
                )
                as earlier_fingerprints
        from records_in_scope
    ) as landed_records
    where not array_contains(earlier_fingerprints, record_fingerprint)
),

keyed_changes as (
    select
        table_id,
        key_json,
        sequence_key,
        {{ 'tie_rank' if tie_formats else '1 as tie_rank' }},
        max(commit_ts) as commit_ts,
        max(key_bucket) as key_bucket,
        max_by(after_image, if(after_image is not null, record_fingerprint, null)) as after_image,
        max_by(before_image, if(before_image is not null, record_fingerprint, null)) as before_image,
        max_by(op, if(after_image is not null, record_fingerprint, null)) as after_op,
        max_by(after_image_is_partial, if(after_image is not null, record_fingerprint, null)) as after_image_is_partial,
        max_by(column_types, record_fingerprint) as column_types,
        max_by(source_format, record_fingerprint) as source_format,
        max_by(message_id, if(after_image is not null, record_fingerprint, null)) as after_message_id,
        max_by(message_id, record_fingerprint) as any_message_id,
        min(load_batch_id) as load_batch_id,
        bool_or(is_key_change) as is_key_change
    from unique_records
    where key_json is not null
    group by table_id, key_json, sequence_key{{ ', tie_rank' if tie_formats }}
),

row_changes as (
    select
        table_id,
        key_json,
        -- the second and later change at a position: the position, a space, the tie rank
        if(
            tie_rank = 1,
            sequence_key,
            concat(sequence_key, ' ', lpad(cast(tie_rank as string), {{ tie_rank_digits }}, '0'))
        ) as sequence_key,
        -- an after image decides the change; a before image alone means the row left the key
        case when after_image is not null then after_op else 'delete' end as op,
        before_image,
        after_image,
        coalesce(after_image_is_partial, false) as after_image_is_partial,
        column_types,
        commit_ts,
        source_format,
        coalesce(after_message_id, any_message_id) as message_id,
        load_batch_id,
        is_key_change,
        key_bucket
    from keyed_changes
),

-- one truncate per table and position, its first landed copy. Numbered from
-- records_in_scope: the op filter cannot pass below unique_records' window, which would
-- then be computed over every record a second time.
truncates as (
    select
        table_id,
        cast(null as string) as key_json,
        sequence_key,
        'truncate' as op,
        cast(null as variant) as before_image,
        cast(null as variant) as after_image,
        false as after_image_is_partial,
        cast(null as map <string, string>) as column_types,
        commit_ts,
        source_format,
        message_id,
        load_batch_id,
        false as is_key_change,
        cast(null as int) as key_bucket
    from (
        select
            records_in_scope.*,
            row_number() over (
                partition by records_in_scope.table_id, records_in_scope.sequence_key
                order by records_in_scope.load_batch_id, records_in_scope.message_id
            ) as copy_number
        from records_in_scope
        where records_in_scope.op = 'truncate'
    ) as numbered_truncates
    where copy_number = 1
),

unioned as (
    select * from row_changes
    union all
    select * from truncates
),

changes as (
    select
        -- 128 bits as 32 hex digits: half the bytes of a SHA-256 id in this table, the history
        -- and their shuffles, and still no collision in any table's lifetime
        md5(concat_ws('\u0001', table_id, key_json, sequence_key, op)) as event_id,
        source_format,
        table_id,
        key_json,
        op,
        before_image,
        after_image,
        after_image_is_partial,
        column_types,
        sequence_key,
        commit_ts,
        is_key_change,
        message_id,
        key_bucket,
        load_batch_id
    from unioned
)

{% if rework_batches %}
    -- the rest of the rewritten earlier partitions, unchanged
    , unchanged as (
        select
            stored.event_id,
            stored.source_format,
            stored.table_id,
            stored.key_json,
            stored.op,
            stored.before_image,
            stored.after_image,
            stored.after_image_is_partial,
            stored.column_types,
            stored.sequence_key,
            stored.commit_ts,
            stored.is_key_change,
            stored.message_id,
            stored.key_bucket,
            stored.load_batch_id
        from {{ this }} as stored
        left anti join new_positions
            on
                stored.table_id = new_positions.table_id
                and stored.key_json <=> new_positions.key_json
                -- a tied change's position is its sequence_key without the tie rank
                and regexp_replace(stored.sequence_key, ' [0-9]{{ '{' ~ tie_rank_digits ~ '}' }}$', '') = new_positions.sequence_key
        where stored.load_batch_id in ({{ rework_batches | join(', ') }})
    )

    select * from changes
    union all
    select * from unchanged
{% else %}
    select * from changes
{% endif %}
