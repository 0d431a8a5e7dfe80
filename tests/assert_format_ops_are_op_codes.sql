-- Every vendor op that var cdc_formats names in a format's `ops` (the facts the flattening
-- macros render into SQL at compile time) is a row of seed cdc_op_codes for that format, so the
-- seed says what it means (a `_prefix` fact: some row starts with it). Returns the ops the seed
-- lacks.
-- A build that finds the seed unchanged, with this test passed on its rows and on the same facts,
-- sends no query (cdc_seed_test_passed).
{%- set facts = cdc_format_op_facts() %}
{%- set seed_id = 'seed.' ~ project_name ~ '.cdc_op_codes' %}
{%- set seed = cdc_seed_state(seed_id) if execute else none %}
{%- if seed is not none %}
    {%- set value = seed.fingerprint ~ ':' ~ local_md5(facts) %}
    {%- do cdc_seed_test_inputs().update({model.unique_id: {'seed': seed_id, 'value': value}}) %}
    {%- if cdc_seed_test_passed(model.unique_id, seed_id, value) %}
        {%- do cdc_empty_test_scopes().append(model.unique_id) %}
    {%- endif %}
{%- endif %}
with format_op_facts as (
    {{ facts }}
),

op_codes as (
    select
        source_format,
        vendor_op
    from {{ ref('cdc_op_codes') }}
)

select
    format_op_facts.source_format,
    format_op_facts.fact,
    format_op_facts.vendor_op
from format_op_facts
where not exists (
    select 1
    from op_codes
    where
        op_codes.source_format = format_op_facts.source_format
        and (
            op_codes.vendor_op = format_op_facts.vendor_op
            or (format_op_facts.is_prefix and startswith(op_codes.vendor_op, format_op_facts.vendor_op))
        )
)
