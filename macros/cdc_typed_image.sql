{#
    A row image (variant object of column -> JSON value) with each value converted to
    the type its envelope declares. `column_types` is a SQL map of column name -> vendor
    type name; which vendor type gets which conversion is data: var cdc_formats,
    `value_types`. Unlisted types keep their JSON value; JSON null stays null; a value
    that does not convert becomes null rather than failing the run.
    A type name may carry parameters after '(' (`org.apache.kafka.connect.data.Decimal(scale=2)`):
    it matches `value_types` by the part before '(', and a conversion may read the
    parameters (decimal_base64 reads `scale=`).
#}
{% macro cdc_typed_image(image, column_types, source_format) %}
    {{ return(adapter.dispatch('cdc_typed_image', 'cdc')(image, column_types, source_format)) }}
{% endmacro %}

{% macro default__cdc_typed_image(image, column_types, source_format) %}
    {%- set conversions = {
        'epoch_millis': 'cast(timestamp_millis(cast(column_value as bigint)) as variant)',
        'base64': 'cast(unbase64(cast(column_value as string)) as variant)',
        'double': 'cast(cast(column_value as double) as variant)',
        'epoch_days': 'cast(date_from_unix_date(cast(column_value as int)) as variant)',
        'epoch_micros': 'cast(timestamp_micros(cast(column_value as bigint)) as variant)',
        'epoch_nanos': 'cast(timestamp_micros(div(cast(column_value as bigint), 1000)) as variant)',
        'iso_timestamp': 'cast(try_to_timestamp(cast(column_value as string)) as variant)',
        'decimal_text': "case when trim(cast(column_value as string)) rlike '^-?[0-9]+([.][0-9]+)?$' then parse_json(trim(cast(column_value as string))) end",
        'decimal_base64': cdc_decimal_from_base64('cast(column_value as string)', "coalesce(try_cast(regexp_extract(column_type, 'scale=([0-9]+)', 1) as int), 0)"),
    } -%}
    {%- set value_types = var('cdc_formats')[source_format].get('value_types', {}) -%}
    {%- for vendor_type, conversion in value_types.items() if conversion not in conversions -%}
        {{ exceptions.raise_compiler_error(
            "cdc_typed_image: format '" ~ source_format ~ "' maps type '" ~ vendor_type
            ~ "' to unknown conversion '" ~ conversion ~ "'; known: " ~ conversions.keys() | join(', ')) }}
    {%- endfor -%}
    case when schema_of_variant({{ image }}) like 'OBJECT<%' then
        to_variant_object(transform_values(
            cast({{ image }} as map<string, variant>),
            (column_name, column_value) -> transform(
                array(coalesce({{ column_types }}[column_name], '')),
                column_type -> case
                    when is_variant_null(column_value) then column_value
                    {%- for vendor_type, conversion in value_types.items() %}
                    when substring_index(column_type, '(', 1) = '{{ vendor_type }}' then {{ conversions[conversion] }}
                    {%- endfor %}
                    else column_value
                end
            )[0]
        ))
    end
{% endmacro %}
