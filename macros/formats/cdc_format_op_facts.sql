{#
    Every vendor op named in var cdc_formats (`<format>.ops`) as an inline table
    (source_format, fact, vendor_op, is_prefix): data test assert_format_ops_are_op_codes
    checks each against seed cdc_op_codes. `op_ranks` names ops by its keys ('*' is no op);
    a fact whose key ends in `_prefix` is the start of vendor ops, not one.
#}
{% macro cdc_format_op_facts() %}
    {%- set rows = [] -%}
    {%- for source_format, settings in var('cdc_formats').items() if settings.get('ops') -%}
        {%- for fact, value in settings['ops'].items() -%}
            {%- set names = value.keys() | reject('equalto', '*') | list if value is mapping
                else ([value] if value is string else value) -%}
            {%- for name in names -%}
                {%- do rows.append((source_format, fact, name, fact.endswith('_prefix'))) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- if rows | length == 0 -%}
        select
            cast(null as string) as source_format, cast(null as string) as fact,
            cast(null as string) as vendor_op, false as is_prefix
        where false
    {%- else -%}
        select * from values
        {%- for source_format, fact, name, is_prefix in rows %}
            ({{ cdc_string_literal(source_format) }}, {{ cdc_string_literal(fact) }}, {{ cdc_string_literal(name) }}, {{ 'true' if is_prefix else 'false' }})
            {%- if not loop.last %},{% endif %}
        {%- endfor %}
        as format_op_facts (source_format, fact, vendor_op, is_prefix)
    {%- endif -%}
{% endmacro %}
