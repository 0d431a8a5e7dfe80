{#-
    Versions of a key form one unbroken, non-overlapping chain of half-open intervals:
    each version ends where the next begins (time and sequence), never before it
    starts, and only the last one is open (valid_to null).
-#}
{% test versions_do_not_overlap(
    model, key_columns, order_column='version_number',
    from_column='valid_from', to_column='valid_to',
    from_sequence_column='valid_from_sequence', to_sequence_column='valid_to_sequence'
) %}
    {% if key_columns is string or key_columns | length == 0 %}
        {{ exceptions.raise_compiler_error("versions_do_not_overlap: `key_columns` must be a non-empty list") }}
    {% endif %}
    with chained as (
        select
            {{ key_columns | join(', ') }},
            {{ order_column }},
            {{ from_column }} as version_from,
            {{ to_column }} as version_to,
            {{ from_sequence_column }} as from_sequence,
            {{ to_sequence_column }} as to_sequence,
            lead({{ from_column }}) over key_order as next_from,
            lead({{ from_sequence_column }}) over key_order as next_from_sequence
        from {{ model }}
        window key_order as (partition by {{ key_columns | join(', ') }} order by {{ order_column }})
    )

    select *
    from chained
    where version_to < version_from
        or from_sequence >= to_sequence
        or not (version_to <=> next_from)
        or not (to_sequence <=> next_from_sequence)
{% endtest %}
