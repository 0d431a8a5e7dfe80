{#-
    The versions of each key form one valid SCD2 chain, checked in one pass over the key's
    versions (one shuffle) rather than one scan per rule. Each row returned is a version
    breaking a rule, named in `violation`:
      null: COLUMNS        the version has no value in these of the `not_null` columns, or, if
                           it is current and not deleted (a live row), of the `live_not_null`
                           columns (checked here, not by a second test that would scan the
                           versions again)
      duplicate version    another row of the key has the same version number
      current versions: N  the key has N current versions, not exactly one
      overlap              the version does not end where the next begins (time and sequence),
                           ends before it starts, or is open although a later one exists
-#}
{% test scd2_versions_are_valid(
    model, key_columns, order_column='version_number', current_column='is_current',
    from_column='valid_from', to_column='valid_to',
    from_sequence_column='valid_from_sequence', to_sequence_column='valid_to_sequence', not_null=[],
    live_not_null=[], deleted_column='is_deleted'
) %}
    {% if key_columns is string or key_columns | length == 0 %}
        {{ exceptions.raise_compiler_error(
            "scd2_versions_are_valid: `key_columns` must be a non-empty list of column names; got " ~ key_columns) }}
    {% endif %}
    {% for name, columns in [('not_null', not_null), ('live_not_null', live_not_null)] %}
        {% if columns is string or columns is mapping %}
            {{ exceptions.raise_compiler_error(
                "scd2_versions_are_valid: `" ~ name ~ "` must be a list of column names; got " ~ columns) }}
        {% endif %}
    {% endfor %}
    {%- set keys = cdc_quote_identifiers(key_columns) -%}
    {%- set null_checks = [] -%}
    {%- for column in not_null -%}
        {%- do null_checks.append(
            'if(' ~ cdc_quote_identifier(column) ~ ' is null, ' ~ cdc_string_literal(column) ~ ', null)') -%}
    {%- endfor %}
    {%- for column in live_not_null -%}
        {%- do null_checks.append(
            'if(' ~ current_column ~ ' and not ' ~ deleted_column ~ ' and ' ~ cdc_quote_identifier(column)
            ~ ' is null, ' ~ cdc_string_literal(column) ~ ', null)') -%}
    {%- endfor %}
    with chained as (
        select
            {{ keys | join(', ') }},
            {{ order_column }} as version_order,
            {{ from_column }} as version_from,
            {{ to_column }} as version_to,
            {{ from_sequence_column }} as from_sequence,
            {{ to_sequence_column }} as to_sequence,
            lead({{ order_column }}) over key_order as next_order,
            lag({{ order_column }}) over key_order as previous_order,
            lead({{ from_column }}) over key_order as next_from,
            lead({{ from_sequence_column }}) over key_order as next_from_sequence,
            count_if({{ current_column }}) over (partition by {{ keys | join(', ') }}) as current_versions,
            {{ "concat_ws(', ', " ~ null_checks | join(', ') ~ ")" if null_checks else "''" }} as null_columns
        from {{ model }}
        window key_order as (partition by {{ keys | join(', ') }} order by {{ order_column }})
    ),

    checked as (
        select
            *,
            case
                when null_columns != '' then concat('null: ', null_columns)
                when version_order = next_order or version_order = previous_order then 'duplicate version'
                when current_versions != 1 then concat('current versions: ', current_versions)
                when
                    version_to < version_from
                    or from_sequence >= to_sequence
                    or not (version_to <=> next_from)
                    or not (to_sequence <=> next_from_sequence)
                    then 'overlap'
            end as violation
        from chained
    )

    select * from checked
    where violation is not null
{% endtest %}
