{# The formats of var cdc_formats whose setting `flag` is true. #}
{% macro cdc_formats_with(flag) %}
    {% if flag is not string or not flag %}
        {{ cdc_argument_error('cdc_formats_with', 'flag', 'the name of a boolean setting of var cdc_formats, e.g. positions_can_tie', flag) }}
    {% endif %}
    {% set formats = [] %}
    {% for name, settings in var('cdc_formats').items() if settings.get(flag, false) %}
        {% do formats.append(name) %}
    {% endfor %}
    {{ return(formats) }}
{% endmacro %}
