{#
    The configuration of one typed table (var cdc_typed_tables): its source table_id, optional
    key_columns override, and its columns as (name, Spark type) pairs, sorted by name.

    The columns are those the table's envelopes declared (cdc_typed_columns), so a column added
    upstream appears on the next build and a dropped one stays (null from the version that no
    longer has it). A column's type is its declared type (cdc_declared_type), or the type of its
    values where the format declares none, taken in sequence order: a change to a wider type
    widens the column (cdc_wider_type); undeclared numbers of kinds no exact type holds together
    take double, as Spark reads JSON numbers. A change that nothing holds without loss, or a latest
    declaration narrower than the column, stops the model with an error naming the table,
    column, old and new type and the sequence where the change began (for a narrowing: where the
    type was declared again after the wider one); the view keeps its last good shape until the
    user sets the type in `column_types` of the table's entry in the var, which always wins.
    Declared values of a kind their declared type does not hold (text declared int32, a decimal
    wider than its declared precision) are null in the typed column where its type does not hold
    them, and the build warns, naming the column, the declaration and its sequence positions. Columns the model's YAML
    lists and the stream has not shown yet are kept, with their YAML `data_type` (else string).
    Before cdc_typed_columns has read the table (a first `--select` of the typed model, or the
    scaffold), the columns are discovered from the types of the values in cdc_history. A typed
    model with columns its YAML does not document (one the source added) compiles with a warning
    naming them and the scaffold command that documents them.
#}
{% macro cdc_typed_table_spec(name) %}
    {%- if name is not string or not name | trim -%}
        {{ cdc_argument_error('cdc_typed_table_spec', 'name', 'the name of a typed table in var cdc_typed_tables', name) }}
    {%- endif -%}
    {%- set tables = (var('cdc_typed_tables', none) or {}) -%}
    {%- if name not in tables -%}
        {{ exceptions.raise_compiler_error(
            "cdc_typed_table_spec: '" ~ name ~ "' is not in var cdc_typed_tables (dbt_project.yml); "
            ~ "add `" ~ name ~ ": {table_id: <database.table>}` there or run scripts/scaffold_typed_table.py") }}
    {%- endif -%}
    {%- set spec = tables[name] -%}
    {%- if spec.table_id is not defined or not spec.table_id -%}
        {{ exceptions.raise_compiler_error("cdc_typed_tables." ~ name ~ ": table_id is required") }}
    {%- endif -%}
    {%- set pinned = spec.get('column_types') or {} -%}
    {%- if pinned is not mapping -%}
        {{ exceptions.raise_compiler_error(
            "cdc_typed_tables." ~ name ~ ".column_types must map column names to Spark types; got '" ~ pinned ~ "'") }}
    {%- endif -%}
    {#- both refs outside any condition, so that dbt records them when it parses the model -#}
    {%- set columns_relation = ref('cdc_typed_columns') -%}
    {%- set history_relation = ref('cdc_history') -%}
    {%- set scd_columns = cdc_typed_scd_columns() -%}
    {%- set types = {} -%}
    {%- for column in model.columns.values() if column.name not in scd_columns -%}
        {%- do types.update({column.name: column.data_type or none}) -%}
    {%- endfor -%}
    {%- if execute -%}
        {%- set rows = [] -%}
        {%- if load_relation(columns_relation) is not none -%}
            {%- set rows = cdc_typed_columns_rows(columns_relation, spec.table_id) -%}
        {%- endif -%}
        {%- if rows | length == 0 and load_relation(history_relation) is not none -%}
            {%- set discovered = run_query(
                "select column_name, schema_of_variant_agg(column_value) from "
                ~ history_relation ~ " lateral view explode(cast(row_image as map<string, variant>)) "
                ~ "as column_name, column_value where table_id = " ~ cdc_string_literal(spec.table_id)
                ~ " group by column_name") -%}
            {%- for row in discovered.rows -%}
                {%- do types.update({row[0]: none if row[1] | lower == 'void' else row[1] | lower}) -%}
            {%- endfor -%}
        {%- endif -%}
        {%- set numeric_types = '^(tinyint|smallint|int|bigint|float|double|decimal[(].*)$' -%}
        {%- set observations = {} -%}
        {%- for row in rows if row[0] is not none -%}
            {%- set declared_type = cdc_declared_type(row[1], row[2]) -%}
            {%- do observations.setdefault(row[0], []).append({
                'type': declared_type or (none if row[3] in (none, 'void') else row[3]),
                'is_declared': declared_type is not none,
                'declared': row[2] or 'its values',
                'value_type': none if row[3] in (none, 'void') else row[3],
                'first': row[4],
                'last': row[5],
            }) -%}
        {%- endfor -%}
        {#- a pinned column takes its type from `column_types` below: nothing to fold or report -#}
        {%- for column_name, seen in observations.items() if column_name not in pinned -%}
            {%- set fold = {'type': none} -%}
            {%- for observation in seen | selectattr('type') | sort(attribute='first') -%}
                {%- set wider = cdc_wider_type(fold.type, observation.type) if fold.type else observation.type -%}
                {#- undeclared numbers of two kinds (JSON's 12.5 and 1e-5) are what Spark reads them as: double -#}
                {%- if wider is none and not observation.is_declared
                    and modules.re.match(numeric_types, fold.type) and modules.re.match(numeric_types, observation.type) -%}
                    {%- set wider = 'double' -%}
                {%- endif -%}
                {%- if wider is none -%}
                    {{ cdc_typed_type_change_error(name, spec.table_id, column_name, fold.type, observation, 'which no type holds together with it without loss') }}
                {%- endif -%}
                {%- do fold.update({'type': wider}) -%}
            {%- endfor -%}
            {%- set declarations = seen | selectattr('is_declared') | sort(attribute='last') | list -%}
            {%- if declarations and declarations[-1].type != fold.type -%}
                {#- the narrower declaration began where its last run did: at its first position
                    after the last one of any other type (a type declared again is a new run) -#}
                {%- set latest = declarations[-1] -%}
                {%- set others_last = seen | selectattr('type') | rejectattr('type', 'equalto', latest.type) | map(attribute='last') | list -%}
                {%- set begins = [] -%}
                {%- for observation in declarations if observation.type == latest.type
                    and (not others_last or observation.first > others_last | max) -%}
                    {%- do begins.append(observation.first) -%}
                {%- endfor -%}
                {{ cdc_typed_type_change_error(name, spec.table_id, column_name, fold.type,
                    {'type': latest.type, 'declared': latest.declared, 'first': begins | min if begins else latest.first},
                    'narrower than the type it has so far') }}
            {%- endif -%}
            {#- declared values the declared type does not hold (a hand-written or faulty stream):
                the typed column reads null where its type does not hold one; the build says so.
                Integers all read as bigint, a float or double holds any number and text any value,
                so only other kinds are seen. -#}
            {%- if model.resource_type == 'model' -%}
                {%- for observation in seen if observation.is_declared and observation.value_type
                    and observation.type != 'string'
                    and cdc_wider_type(observation.type, observation.value_type) != observation.type
                    and not (observation.value_type == 'bigint' and observation.type in ('tinyint', 'smallint', 'int'))
                    and not (observation.type in ('float', 'double') and modules.re.match(numeric_types, observation.value_type)) -%}
                    {%- do exceptions.warn(
                        "typed table '" ~ name ~ "' (" ~ spec.table_id ~ "): column '" ~ column_name ~ "' has values of type "
                        ~ observation.value_type ~ " declared " ~ observation.declared ~ " (" ~ observation.type ~ ", sequence "
                        ~ observation.first ~ " to " ~ observation.last ~ "), which that type does not hold: " ~ model.name
                        ~ " reads null where its column type (" ~ fold.type ~ ") does not hold a value; cdc_history keeps them as sent."
                        ~ " To read them as another type, set it in `column_types` of the table's entry in var cdc_typed_tables.") -%}
                {%- endfor -%}
            {%- endif -%}
            {%- do types.update({column_name: fold.type or types.get(column_name)}) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- do types.update(pinned) -%}
    {#- a column the stream added since the YAML was written: built, but without its description -#}
    {%- set undocumented = types | reject('in', model.columns) | sort -%}
    {%- if execute and model.resource_type == 'model' and undocumented -%}
        {%- do exceptions.warn(
            "typed table '" ~ name ~ "' (" ~ spec.table_id ~ "): " ~ model.name ~ " has columns its YAML does not document: "
            ~ undocumented | map('tojson') | join(', ') ~ ". Run scripts/scaffold_typed_table.py " ~ spec.table_id
            ~ " --name " ~ name ~ " again: it adds them and keeps what the YAML already says.") -%}
    {%- endif -%}
    {%- set row_columns = [] -%}
    {%- for column_name, data_type in types | dictsort -%}
        {%- do row_columns.append((column_name, data_type or 'string')) -%}
    {%- endfor -%}
    {{ return({'table_id': spec.table_id, 'key_columns': spec.get('key_columns'), 'columns': row_columns}) }}
{% endmacro %}

{# The error of a column type change the typed table does not apply by itself (cdc_typed_table_spec). #}
{% macro cdc_typed_type_change_error(name, table_id, column_name, old_type, observation, why) %}
    {{ exceptions.raise_compiler_error(
        "typed table '" ~ name ~ "' (" ~ table_id ~ "): column '" ~ column_name ~ "' changes from " ~ old_type
        ~ " to " ~ observation.type ~ " (declared " ~ observation.declared ~ ", from sequence " ~ observation.first
        ~ "), " ~ why ~ ". The view keeps its last good shape. Decide in var cdc_typed_tables: `" ~ name
        ~ ": {table_id: ..., column_types: {" ~ tojson(column_name) ~ ": " ~ observation.type ~ "}}` applies the new type"
        ~ " (values that do not convert become null), `" ~ old_type ~ "` keeps the old one.") }}
{% endmacro %}
