{# The landed formats whose after images can be partial (var cdc_formats, `partial_after_images`). #}
{% macro cdc_partial_image_formats() %}
    {{ return(cdc_landed_formats() | select('in', cdc_formats_with('partial_after_images')) | list) }}
{% endmacro %}
