{#
    The SCD2 rules of cdc_history: the versions of each key from its changes. Renders CTE
    definitions (to follow `with` or a comma; none trailing), the last one, `name`, holding one
    row per version; the CTEs before it are truncate_changes, all_changes, changes_to_fold,
    resolved, versioned and, with key_change_rounds > 0, carried_*: names the caller must not use.

    The rules:
      - a key's changes are ordered by sequence_key (never by arrival); equal positions by op,
        then event_id
      - each insert, update or snapshot opens a version, each delete or truncate a deleted
        version; a delete that ends nothing (the key is already deleted) is dropped, so versions
        alternate as the source row did (a key's first change may be a delete: the row existed
        before capture; a truncate before a key's first change is dropped)
      - a truncate (a row of `truncates`) ends the live version of every key of its table
        (`table_keys`)
      - a partial after image (after_image_is_partial) is overlaid on the row as it was, and
        restricted to the columns its message declares where it declares them
        (partial_image_columns: a column dropped upstream is not carried over; cdc_history_fold)
      - a key change with a partial after image (`partial_key_changes`) starts the new key from
        the old key's row at that position (carry rows, one join round per link of the longest
        chain: key_change_rounds)
      - valid_from never goes back in time (max of valid_from_floor so far); a version is valid to
        the next one's valid_from; the last one is current

    Arguments: see macros/history/_history__macros.yml. Every input is a CTE name; `changes`,
    `prior_changes` and `partial_key_changes` may be relations. The macros it calls are named
    with their package (cdc.), so that it works installed as a package (integration_tests/).
#}
{% macro cdc_scd2_versions(
    changes, truncates, table_keys, prior_changes=none, replay_keys=none, partial_key_changes=none,
    key_change_rounds=0, partial_images=true, closed_partition=none, name='scd2_versions'
) %}
    {%- set identifier = '[A-Za-z_][A-Za-z0-9_]*' -%}
    {%- set arguments = {
        'changes': changes, 'truncates': truncates, 'table_keys': table_keys, 'prior_changes': prior_changes,
        'replay_keys': replay_keys, 'partial_key_changes': partial_key_changes, 'name': name,
    } -%}
    {%- for argument in ['truncates', 'table_keys', 'replay_keys', 'name'] -%}
        {%- set value = arguments[argument] -%}
        {%- if (value is not none or argument not in ['replay_keys'])
            and (value is not string or not modules.re.fullmatch(identifier, value)) -%}
            {{ cdc.cdc_argument_error('cdc_scd2_versions', argument, 'the name of a CTE (it qualifies columns)', value) }}
        {%- endif -%}
    {%- endfor -%}
    {%- for argument in ['changes', 'prior_changes', 'partial_key_changes'] -%}
        {%- set value = arguments[argument] -%}
        {%- if (value is none and argument == 'changes') or (value is string and not value | trim)
            or (value is not none and value is not string and value.identifier is not defined) -%}
            {{ cdc.cdc_argument_error('cdc_scd2_versions', argument, 'a relation or the name of a CTE', value) }}
        {%- endif -%}
    {%- endfor -%}
    {%- if key_change_rounds is not integer or key_change_rounds < 0 -%}
        {{ cdc.cdc_argument_error('cdc_scd2_versions', 'key_change_rounds', 'a whole number of at least 0', key_change_rounds) }}
    {%- endif -%}
    {%- if key_change_rounds > 0 and partial_key_changes is none -%}
        {{ cdc.cdc_argument_error(
            'cdc_scd2_versions', 'partial_key_changes',
            'a relation or CTE name when key_change_rounds > 0 (it is ' ~ key_change_rounds ~ ')', partial_key_changes) }}
    {%- endif -%}
    {%- if partial_images is not boolean -%}
        {{ cdc.cdc_argument_error('cdc_scd2_versions', 'partial_images', 'true or false', partial_images) }}
    {%- endif -%}
    {%- if closed_partition is not none and closed_partition is not number
        and (closed_partition is not string or not closed_partition | trim) -%}
        {{ cdc.cdc_argument_error('cdc_scd2_versions', 'closed_partition', 'none, a number or a SQL expression', closed_partition) }}
    {%- endif -%}
    {{ return(adapter.dispatch('cdc_scd2_versions', 'cdc')(
        changes, truncates, table_keys, prior_changes, replay_keys, partial_key_changes,
        key_change_rounds, partial_images, closed_partition, name
    )) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_scd2_versions(
    changes, truncates, table_keys, prior_changes, replay_keys, partial_key_changes,
    key_change_rounds, partial_images, closed_partition, name
) %}
    {{ cdc.cdc_unsupported_adapter('cdc_scd2_versions') }}
{% endmacro %}

{% macro spark__cdc_scd2_versions(
    changes, truncates, table_keys, prior_changes, replay_keys, partial_key_changes,
    key_change_rounds, partial_images, closed_partition, name
) %}
    -- a truncate ends the live version of every key of its table
    truncate_changes as (
        select
            {{ truncates }}.event_id,
            {{ truncates }}.source_format,
            {{ table_keys }}.table_id,
            {{ table_keys }}.key_json,
            'truncate' as op,
            cast(null as variant) as before_image,
            cast(null as variant) as after_image,
            false as after_image_is_partial,
            {{ truncates }}.sequence_key,
            {{ truncates }}.commit_ts,
            {{ table_keys }}.key_bucket,
            false as is_key_change,
            {{ truncates }}.commit_ts as valid_from_floor,
            false as is_prior,
            cast(null as int) as version_offset,
            cast(null as array<string>) as partial_image_columns
        from {{ table_keys }}
        inner join {{ truncates }}
            on {{ table_keys }}.table_id = {{ truncates }}.table_id
        {% if replay_keys is not none %}
            where {{ truncates }}.sequence_key >= {{ table_keys }}.replay_from_sequence
        {% endif %}
    ),

    all_changes as (
        select * from {{ changes }}
        union all
        select * from truncate_changes
        {% if prior_changes is not none %}
            union all
            select * from {{ prior_changes }}
        {% endif %}
    ),

    {% if key_change_rounds > 0 %}
        -- A key change with a partial after image starts the new key from the old key's row at
        -- that position: a `carry` row holding that row goes into the new key's changes just
        -- before the insert (`carry` sorts before every op), which is folded onto it and which
        -- it never outlives as a version. The old key's row comes from a replay of the old keys
        -- only; when it itself started with such a change, its own base is added along the
        -- chain, one round per link.
        carried_key_changes as (
            select key_changes.*
            from {{ partial_key_changes }} as key_changes
            {% if replay_keys is not none %}
                inner join {{ replay_keys }}
                    on
                        key_changes.table_id = {{ replay_keys }}.table_id
                        and key_changes.to_key_json = {{ replay_keys }}.key_json
                        and key_changes.sequence_key >= {{ replay_keys }}.replay_from_sequence
            {% endif %}
        ),

        carried_from_keys as (
            select distinct
                table_id,
                from_key_json as key_json
            from carried_key_changes
        ),

        -- the old keys' changes; a key change into one of them starts from an empty row
        carried_from_changes as (
            select all_changes.*
            from all_changes
            left semi join carried_from_keys
                on
                    all_changes.table_id = carried_from_keys.table_id
                    and all_changes.key_json = carried_from_keys.key_json
            union all
            {{ cdc.cdc_history_carry_rows('carried_key_changes', "parse_json('{}')") }}
            left semi join carried_from_keys
                on
                    carried_key_changes.table_id = carried_from_keys.table_id
                    and carried_key_changes.to_key_json = carried_from_keys.key_json
        ),

        carried_from_replay as (
            select
                replay.*,
                -- the key change that started this row's image, if any
                first_value(if(replay.op = 'carry', replay.sequence_key, null)) over (
                    partition by replay.table_id, replay.key_json, replay.image_segment
                    order by replay.sequence_key, replay.op, replay.event_id
                ) as carried_since_sequence
            from ({{ cdc.cdc_history_fold('carried_from_changes', partial_images) }}) as replay
        ),

        -- each old key's row just before each of its changes
        carried_from_rows as (
            select
                table_id,
                key_json,
                sequence_key,
                op,
                lag(live_image) over key_order as row_image,
                lag(carried_since_sequence) over key_order as carried_since_sequence
            from carried_from_replay
            window key_order as (partition by table_id, key_json order by sequence_key, op, event_id)
        ),

        -- each key change's old row as the replay saw it (without the base of the key change
        -- that started it, if any: carried_since_sequence)
        carried_images as (
            select
                carried_key_changes.*,
                carried_from_rows.row_image,
                carried_from_rows.carried_since_sequence
            from carried_key_changes
            left join carried_from_rows
                on
                    carried_key_changes.table_id = carried_from_rows.table_id
                    and carried_key_changes.from_key_json = carried_from_rows.key_json
                    and carried_key_changes.sequence_key = carried_from_rows.sequence_key
                    and carried_from_rows.op = 'delete'
        ),

        -- Each key change's base: its old row, over the base of the key change that started that
        -- row (carried_since_sequence), if any; one round per link of the longest chain
        -- (plan.key_change_rounds, usually 1).
        carried_bases_0 as (
            select
                table_id,
                to_key_json,
                sequence_key,
                cast(null as variant) as base_image
            from carried_images
            where false
        ),

        {% for round in range(1, key_change_rounds + 1) %}
            carried_bases_{{ round }} as (
                select
                    carried_images.table_id,
                    carried_images.to_key_json,
                    carried_images.sequence_key,
                    case
                        when carried_images.carried_since_sequence is null then carried_images.row_image
                        else {{ cdc.cdc_overlay_image('parent.base_image', 'carried_images.row_image') }}
                    end as base_image
                from carried_images
                left join carried_bases_{{ round - 1 }} as parent
                    on
                        carried_images.table_id = parent.table_id
                        and carried_images.from_key_json = parent.to_key_json
                        and carried_images.carried_since_sequence = parent.sequence_key
            ),
        {% endfor %}

        carried_bases as (
            select
                table_id,
                to_key_json,
                sequence_key,
                base_image
            from carried_bases_{{ key_change_rounds }}
        ),

        changes_to_fold as (
            select * from all_changes
            union all
            {{ cdc.cdc_history_carry_rows('carried_bases', 'carried_bases.base_image') }}
        ),
    {% else %}
        changes_to_fold as (
            select * from all_changes
        ),
    {% endif %}

    resolved as (
        {{ cdc.cdc_history_fold('changes_to_fold', partial_images) }}
    ),

    versioned as (
        select
            table_id,
            key_json,
            op,
            is_deleted,
            -- a deleted version shows the row as it was when deleted: the before image, over the
            -- row as it was when the before image may be partial (a key change's, in SharePlex)
            case
                when not is_deleted then live_image
                when is_key_change and before_image is not null
                    then {{ cdc.cdc_overlay_image('lag(live_image) over key_order', 'before_image') }}
                else coalesce(before_image, lag(live_image) over key_order)
            end as row_image,
            -- valid_from never goes back in time, even if the source clock did
            max(valid_from_floor) over (
                partition by table_id, key_json order by sequence_key, op, event_id
                rows between unbounded preceding and current row
            ) as valid_from,
            sequence_key as valid_from_sequence,
            lead(sequence_key) over key_order as valid_to_sequence,
            commit_ts,
            event_id,
            source_format,
            key_bucket,
            row_number() over key_order
            + coalesce(max(version_offset) over (partition by table_id, key_json), 0) as version_number
        from resolved
        where op != 'carry'
        window key_order as (partition by table_id, key_json order by sequence_key, op, event_id)
    ),

    {{ name }} as (
        select
            table_id,
            key_json,
            version_number,
            valid_from,
            -- in version order: valid_from_sequence, op, event_id order a key's versions as
            -- key_order did, so this window reuses that sort (version_number would sort again)
            lead(valid_from) over (
                partition by table_id, key_json order by valid_from_sequence, op, event_id
            ) as valid_to,
            is_deleted,
            op,
            row_image,
            valid_from_sequence,
            valid_to_sequence,
            commit_ts,
            event_id,
            source_format,
            key_bucket,
            valid_to_sequence is null as is_current
            {%- if closed_partition is not none %},
                if(valid_to_sequence is null, key_bucket, {{ closed_partition }}) as history_partition
            {%- endif %}
        from versioned
    )
{% endmacro %}
