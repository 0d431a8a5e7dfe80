{#
    A row image (variant object of column -> JSON value) with each value converted to
    the type its envelope declares. `column_types` is a SQL map of column name -> vendor
    type name; which vendor type gets which conversion is data: var cdc_formats,
    `value_types`. Conversions: epoch_millis (13-digit ms -> timestamp), base64 (-> binary),
    millis_of_day, micros_of_day, nanos_of_day (a time of day -> 'HH:mm:ss.fff', 'HH:mm:ss.ffffff',
    'HH:mm:ss.fffffffff'), variable_scale_decimal (Debezium's {scale, value: base64} -> the number),
    double (number or numeric text -> double), number_text and decimal_text (numeric text ->
    the JSON number it spells, macro cdc_json_number), date_text ('yyyy-MM-dd' -> date),
    timestamp_ntz_text ('yyyy-MM-dd HH:mm:ss[.f]' -> timestamp without time zone),
    latin1_bytes (text whose characters are bytes, Canal's rendering of binary -> binary);
    dts_*: Alibaba DTS Avro union records (see models/staging/dts_avro/_dts_avro__docs.md). Unlisted types keep their JSON value; JSON null stays null; a value
    that does not convert becomes null rather than failing the run.
    A type name may carry parameters after '(' (`org.apache.kafka.connect.data.Decimal(scale=2)`):
    it matches `value_types` by the part before '(', and a conversion may read the
    parameters (decimal_base64 reads `scale=`).
#}
{% macro cdc_typed_image(image, column_types, source_format) %}
    {%- if image is not string or not image | trim -%}
        {{ cdc_argument_error('cdc_typed_image', 'image', 'a SQL expression (non-empty string)', image) }}
    {%- endif -%}
    {%- if column_types is not string or not column_types | trim -%}
        {{ cdc_argument_error('cdc_typed_image', 'column_types', 'a SQL expression (non-empty string)', column_types) }}
    {%- endif -%}
    {%- if source_format is not string or source_format not in var('cdc_formats') -%}
        {{ cdc_argument_error('cdc_typed_image', 'source_format', 'a format declared in var cdc_formats (dbt_project.yml)', source_format) }}
    {%- endif -%}
    {{ return(adapter.dispatch('cdc_typed_image', 'cdc')(image, column_types, source_format)) }}
{% endmacro %}

{# Any adapter but Spark: a compile error naming the macro and the adapter. #}
{% macro default__cdc_typed_image(image, column_types, source_format) %}
    {{ cdc_unsupported_adapter('cdc_typed_image') }}
{% endmacro %}

{% macro spark__cdc_typed_image(image, column_types, source_format) %}
    {%- set conversions = {
        'epoch_millis': 'cast(timestamp_millis(cast(column_value as bigint)) as variant)',
        'base64': 'cast(unbase64(cast(column_value as string)) as variant)',
        'epoch_days': 'cast(date_from_unix_date(cast(column_value as int)) as variant)',
        'epoch_micros': 'cast(timestamp_micros(cast(column_value as bigint)) as variant)',
        'epoch_nanos': 'cast(timestamp_micros(div(cast(column_value as bigint), 1000)) as variant)',
        'iso_timestamp': 'cast(try_to_timestamp(cast(column_value as string)) as variant)',
        'decimal_text': cdc_json_number('cast(column_value as string)'),
        'decimal_base64': cdc_decimal_from_base64('cast(column_value as string)', "coalesce(try_cast(regexp_extract(column_type, 'scale=([0-9]+)', 1) as int), 0)"),
        'double': 'cast(try_cast(column_value as double) as variant)',
        'number_text': cdc_json_number('cast(column_value as string)'),
        'date_text': 'cast(try_cast(cast(column_value as string) as date) as variant)',
        'timestamp_ntz_text': 'cast(try_cast(cast(column_value as string) as timestamp_ntz) as variant)',
        'latin1_bytes': "cast(encode(cast(column_value as string), 'ISO-8859-1') as variant)",
        'dts_number': cdc_json_number("try_variant_get(column_value, '$.value', 'string')"),
        'dts_double': "cast(try_variant_get(column_value, '$.value', 'double') as variant)",
        'dts_timestamp': "cast(timestamp_millis(try_variant_get(column_value, '$.timestamp', 'bigint') * 1000 + coalesce(try_variant_get(column_value, '$.millis', 'bigint'), 0)) as variant)",
        'dts_datetime': "case when try_variant_get(column_value, '$.year', 'int') is null then cast(format_string('%02d:%02d:%02d', try_variant_get(column_value, '$.hour', 'int'), try_variant_get(column_value, '$.minute', 'int'), try_variant_get(column_value, '$.second', 'int')) as variant) when try_variant_get(column_value, '$.hour', 'int') is null then cast(cast(try_make_timestamp_ntz(try_variant_get(column_value, '$.year', 'int'), try_variant_get(column_value, '$.month', 'int'), try_variant_get(column_value, '$.day', 'int'), 0, 0, 0) as date) as variant) else cast(try_make_timestamp_ntz(try_variant_get(column_value, '$.year', 'int'), try_variant_get(column_value, '$.month', 'int'), try_variant_get(column_value, '$.day', 'int'), try_variant_get(column_value, '$.hour', 'int'), try_variant_get(column_value, '$.minute', 'int'), try_variant_get(column_value, '$.second', 'int') + coalesce(try_variant_get(column_value, '$.millis', 'int'), 0) / 1000.0) as variant) end",
        'dts_text': "cast(try_variant_get(column_value, '$.value', 'string') as variant)",
        'dts_bytes': "cast(try_to_binary(try_variant_get(column_value, '$.value', 'string'), 'base64') as variant)",
        'variable_scale_decimal': 'coalesce(' ~ cdc_decimal_from_base64("try_variant_get(column_value, '$.value', 'string')", "try_variant_get(column_value, '$.scale', 'int')") ~ ', ' ~ cdc_json_number('cast(column_value as string)') ~ ')',
        'dts_character': "case when lower(try_variant_get(column_value, '$.charset', 'string')) in ('utf8', 'utf8mb4', 'utf8mb3', 'utf-8', 'ascii', 'us-ascii', '') then cast(try_validate_utf8(cast(try_to_binary(try_variant_get(column_value, '$.value', 'string'), 'base64') as string)) as variant) when lower(try_variant_get(column_value, '$.charset', 'string')) in ('latin1', 'iso-8859-1') then cast(decode(try_to_binary(try_variant_get(column_value, '$.value', 'string'), 'base64'), 'ISO-8859-1') as variant) else try_variant_get(column_value, '$.value') end",
    } -%}
    {#- a time of day as a count of units since midnight -> 'HH:mm:ss' and one digit per unit's decimal place -#}
    {%- for conversion, digits in [('millis_of_day', 3), ('micros_of_day', 6), ('nanos_of_day', 9)] -%}
        {%- set per_second = 10 ** digits -%}
        {%- set units = "try_variant_get(column_value, '$', 'bigint')" -%}
        {%- do conversions.update({conversion: "case when " ~ units ~ " >= 0 then cast(format_string('%02d:%02d:%02d.%0"
            ~ digits ~ "d', " ~ units ~ " div " ~ 3600 * per_second ~ ", " ~ units ~ " div " ~ 60 * per_second ~ " % 60, "
            ~ units ~ " div " ~ per_second ~ " % 60, " ~ units ~ " % " ~ per_second ~ ") as variant) end"}) -%}
    {%- endfor -%}
    {%- set value_types = var('cdc_formats')[source_format].get('value_types', {}) -%}
    {%- for vendor_type, conversion in value_types.items() if conversion not in conversions -%}
        {{ exceptions.raise_compiler_error(
            "cdc_typed_image: format '" ~ source_format ~ "' maps type '" ~ vendor_type
            ~ "' to unknown conversion '" ~ conversion ~ "'; known: " ~ conversions.keys() | join(', ')) }}
    {%- endfor -%}
    {#- vendor type -> position of its conversion: a literal map Spark folds once per query, so
        each value's type (paired with it below) costs one lookup, then a simple case on a number -#}
    {%- set used = value_types.values() | unique | list -%}
    {%- set conversion_of_type -%}
        map({% for vendor_type, conversion in value_types.items() -%}
            {{ cdc_string_literal(vendor_type) }}, {{ used.index(conversion) }}{{ ', ' if not loop.last }}
        {%- endfor %})[substring_index(column_type, '(', 1)]
    {%- endset -%}
    case when {{ cdc_is_object(image) }} then
        {% if used -%}
        {#- Each value is paired with its column's type by map_zip_with, which matches the two maps'
            keys through a hash table. Lambdas run interpreted, and in Spark 4.2 every map key an
            interpreted lookup (`types[column_name]`) compares costs a fresh SQL conf: pairing the
            keys once made the parse of 2M DataWorks messages ~17% faster. The zip also yields the
            typed columns absent from the image (a partial image): null there, and dropped by the
            map_filter; a value that does not convert is a JSON null, as before. -#}
        to_variant_object(map_filter(
            map_zip_with(
                cast({{ image }} as map<string, variant>),
                coalesce({{ column_types }}, cast(map() as map<string, string>)),
                (column_name, column_value, column_type) -> case
                    when column_value is null then null
                    when is_variant_null(column_value) then column_value
                    else coalesce(
                        case {{ conversion_of_type }}
                            {%- for conversion in used %}
                            when {{ loop.index0 }} then {{ conversions[conversion] }}
                            {%- endfor %}
                            else column_value
                        end,
                        parse_json('null')
                    )
                end
            ),
            (column_name, column_value) -> column_value is not null
        ))
        {%- else -%}
        {{ image }}
        {%- endif %}
    end
{% endmacro %}
