{# `image` overlaid with `changed` (two variant objects): the columns of `changed` win. #}
{% macro cdc_overlay_image(image, changed) %}
    {% for name, value in {'image': image, 'changed': changed}.items() %}
        {% if value is not string or not value | trim %}
            {{ cdc.cdc_argument_error('cdc_overlay_image', name, 'a SQL expression (a string)', value) }}
        {% endif %}
    {% endfor %}
    {{ return(adapter.dispatch('cdc_overlay_image', 'cdc')(image, changed)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_overlay_image(image, changed) %}
    {{ cdc.cdc_unsupported_adapter('cdc_overlay_image') }}
{% endmacro %}

{% macro spark__cdc_overlay_image(image, changed) %}
    to_variant_object(map_zip_with(
        coalesce(cast({{ image }} as map <string, variant>), cast(map() as map <string, variant>)),
        cast({{ changed }} as map <string, variant>),
        (column_name, old_value, new_value) -> coalesce(new_value, old_value)
    ))
{% endmacro %}
