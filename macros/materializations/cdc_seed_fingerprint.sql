{#
    What a seed's table is made from: its file (dbt's checksum of it) and the settings that
    shape the table, so that a change to either loads the seed again. `layout` names how this
    materialization writes a seed; change it when that changes.
#}
{% macro cdc_seed_fingerprint(model) %}
    {%- set layout = 'create-or-replace-as-select-v1' -%}
    {%- set settings = {
        'column_types': model.config.get('column_types', {}),
        'quote_columns': model.config.get('quote_columns', none),
        'file_format': model.config.get('file_format', none),
        'tblproperties': model.config.get('tblproperties', {}),
    } -%}
    {{ return(local_md5(layout ~ '|' ~ model.checksum.checksum ~ '|' ~ tojson(settings, sort_keys=true))) }}
{% endmacro %}
