{#
    The key columns whose value in a message's declared key (CDL's `unique`) is the row's value
    in none of the images that hold the column: a key that contradicts its row. Null when the
    declared key is not an object.
#}
{% macro cdc_disagreeing_key_columns(declared_key, key_columns, images) %}
    {% if images is string or images | length == 0 %}
        {{ exceptions.raise_compiler_error(
            "cdc_disagreeing_key_columns: images must be a list of SQL expressions; got " ~ images) }}
    {% endif %}
    case when {{ cdc_is_object(declared_key) }} then filter(
        {{ key_columns }},
        column_name -> not exists(
            array({{ images | join(', ') }}),
            image -> {{ cdc_is_object('image') }}
            and to_json(cast(image as map<string, variant>)[column_name])
            = to_json(cast({{ declared_key }} as map<string, variant>)[column_name])
        )
        and exists(
            array({{ images | join(', ') }}),
            image -> {{ cdc_is_object('image') }}
            and map_contains_key(cast(image as map<string, variant>), column_name)
        )
    ) end
{% endmacro %}
