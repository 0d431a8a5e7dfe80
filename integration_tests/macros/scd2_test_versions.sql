{#
    cdc_scd2_versions over one input seed, as cdc_history calls it on a full build: `seed` holds
    changes (event_id, table_id, key_json, op, before_image, after_image as JSON text,
    after_image_is_partial, sequence_key, commit_ts, is_key_change); rows without key_json are
    truncates of their table. Key changes with a partial after image are a delete of the old key
    and an insert of the new one at one sequence_key, both is_key_change and
    after_image_is_partial. Returns the versions with the images as JSON text, the way the
    expected seeds hold them. With with_declared_columns, the seed's `declared_columns` (JSON
    array text) are the columns each partial image's message declares. An empty cell is null (dbt-spark's session target loads an empty cell
    of a string column as the text 'None': seed_text).
#}
{% macro scd2_test_versions(seed, key_change_rounds=0, with_declared_columns=false) %}
    {% if seed is none or seed.identifier is not defined %}
        {{ cdc.cdc_argument_error('scd2_test_versions', 'seed', 'a relation (ref of an input seed)', seed) }}
    {% endif %}
    {% if with_declared_columns is not boolean %}
        {{ cdc.cdc_argument_error('scd2_test_versions', 'with_declared_columns', 'true or false', with_declared_columns) }}
    {% endif %}
    {% if key_change_rounds is not integer or key_change_rounds < 0 %}
        {{ cdc.cdc_argument_error('scd2_test_versions', 'key_change_rounds', 'a whole number of at least 0', key_change_rounds) }}
    {% endif %}
    with input_changes as (
        select
            cast(event_id as string) as event_id,
            'test' as source_format,
            cast(table_id as string) as table_id,
            {{ seed_text('key_json') }} as key_json,
            cast(op as string) as op,
            parse_json({{ seed_text('before_image') }}) as before_image,
            parse_json({{ seed_text('after_image') }}) as after_image,
            coalesce(cast(after_image_is_partial as boolean), false) as after_image_is_partial,
            cast(sequence_key as string) as sequence_key,
            cast(commit_ts as timestamp) as commit_ts,
            0 as key_bucket,
            coalesce(cast(is_key_change as boolean), false) as is_key_change,
            {%- if with_declared_columns %}
                -- the columns the partial image's message declares (JSON array), as cdc_history
                -- takes them from column_types
                from_json({{ seed_text('declared_columns') }}, 'array<string>') as partial_image_columns
            {%- else %}
                cast(null as array<string>) as partial_image_columns
            {%- endif %}
        from {{ seed }}
    ),

    key_changes as (
        select
            event_id,
            source_format,
            table_id,
            key_json,
            op,
            before_image,
            after_image,
            after_image_is_partial,
            sequence_key,
            commit_ts,
            key_bucket,
            is_key_change,
            commit_ts as valid_from_floor,
            false as is_prior,
            cast(null as int) as version_offset,
            partial_image_columns
        from input_changes
        where key_json is not null
    ),

    table_keys as (
        select distinct
            table_id,
            key_json,
            key_bucket
        from key_changes
    ),

    truncates as (
        select
            event_id,
            source_format,
            table_id,
            sequence_key,
            commit_ts
        from input_changes
        where key_json is null
    ),

    -- as int_cdc_key_changes: one per partial key change, from its delete and its insert
    partial_key_changes as (
        select
            table_id,
            max(if(op = 'insert', key_json, null)) as to_key_json,
            sequence_key,
            max(if(op = 'delete', key_json, null)) as from_key_json
        from input_changes
        where is_key_change and after_image_is_partial
        group by table_id, sequence_key
    ),

    {{ cdc.cdc_scd2_versions(
        'key_changes', 'truncates', 'table_keys',
        partial_key_changes='partial_key_changes',
        key_change_rounds=key_change_rounds,
        partial_images=true,
        name='versions',
    ) }}

    select
        table_id,
        key_json,
        version_number,
        valid_from,
        valid_to,
        is_deleted,
        op,
        to_json(row_image) as row_image,
        valid_from_sequence,
        valid_to_sequence,
        is_current,
        event_id
    from versions
{% endmacro %}
