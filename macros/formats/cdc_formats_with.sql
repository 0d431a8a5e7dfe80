{# The formats of var cdc_formats whose setting `flag` is true. #}
{% macro cdc_formats_with(flag) %}
    {% set formats = [] %}
    {% for name, settings in var('cdc_formats').items() if settings.get(flag, false) %}
        {% do formats.append(name) %}
    {% endfor %}
    {{ return(formats) }}
{% endmacro %}
