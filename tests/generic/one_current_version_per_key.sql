{#- Every key with versions has exactly one current version. -#}
{% test one_current_version_per_key(model, key_columns, current_column='is_current') %}
    {% if key_columns is string or key_columns | length == 0 %}
        {{ exceptions.raise_compiler_error("one_current_version_per_key: `key_columns` must be a non-empty list") }}
    {% endif %}
    select {{ key_columns | join(', ') }}, count_if({{ current_column }}) as current_versions
    from {{ model }}
    group by {{ key_columns | join(', ') }}
    having count_if({{ current_column }}) != 1
{% endtest %}
