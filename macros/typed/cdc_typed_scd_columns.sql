{# The SCD2 columns every typed table carries besides the source columns. #}
{% macro cdc_typed_scd_columns() %}
    {{ return(['key_json', 'version_number', 'valid_from', 'valid_to', 'is_current', 'is_deleted', 'op',
               'valid_from_sequence', 'valid_to_sequence']) }}
{% endmacro %}
