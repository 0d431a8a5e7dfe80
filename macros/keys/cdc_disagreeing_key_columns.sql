{#
    The key columns whose value in a message's declared key (CDL's `unique`) is the row's value
    in none of the images that hold the column: a key that contradicts its row. Null when the
    declared key is not an object.
#}
{% macro cdc_disagreeing_key_columns(declared_key, key_columns, images) %}
    {%- if declared_key is not string or not declared_key | trim -%}
        {{ cdc_argument_error('cdc_disagreeing_key_columns', 'declared_key', 'a SQL expression (non-empty string)', declared_key) }}
    {%- endif -%}
    {%- if key_columns is not string or not key_columns | trim -%}
        {{ cdc_argument_error('cdc_disagreeing_key_columns', 'key_columns', 'a SQL expression (non-empty string)', key_columns) }}
    {%- endif -%}
    {%- if images is string or images is mapping or images is not iterable or images | length == 0
        or images | reject('string') | list | length > 0 -%}
        {{ cdc_argument_error('cdc_disagreeing_key_columns', 'images', 'a non-empty list of SQL expressions', images) }}
    {%- endif -%}
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
