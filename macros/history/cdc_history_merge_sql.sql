{#
    The MERGE of an incremental cdc_history run: dbt-spark's merge strategy calls it through
    spark__get_merge_sql (the model's config cdc_merge='scd2_versions').

    `source` holds, once per (table_id, key_json, version_number), the versions the run
    recomputed (merge_action 'upsert') and the stored versions it recomputed away ('delete').
    A version recomputed as it was stored is left alone (VARIANT values cannot be compared:
    the images are compared by a hash of their JSON), so an increment writes only the versions
    it opens, closes or changes; with deletion vectors the rows it replaces are marked, not
    rewritten with their files. The match reads only the partitions the run's plan noted
    (cdc_history_note_merge_scope, kept in the invocation's state): the current versions of the
    touched key buckets and the closed partitions a late change reaches. A table whose current
    versions are bucketed by another var cdc_key_buckets stops the run before it merges
    (cdc_history_check_key_buckets).
#}
{% macro cdc_history_merge_sql(target, source) %}
    {% set noted = cdc_invocation_state('cdc_history_merge_scope', {}) %}
    {% if 'current_buckets' not in noted %}
        {{ exceptions.raise_compiler_error(
            'cdc_history_merge_sql: no merge scope was noted in this invocation (cdc_history_note_merge_scope '
            ~ 'runs while cdc_history compiles as an incremental run); got none for ' ~ target) }}
    {% endif %}
    {% set current_buckets = noted.current_buckets %}
    {% set closed_partitions = noted.closed_partitions %}
    {% set scope = [] %}
    {% if current_buckets %}
        {% do scope.append('(stored.is_current and stored.history_partition in (' ~ current_buckets | join(', ') ~ '))') %}
    {% endif %}
    {% if closed_partitions %}
        {% do scope.append('(not stored.is_current and stored.history_partition in (' ~ closed_partitions | join(', ') ~ '))') %}
    {% endif %}
    {#- the table's columns and properties in one `describe extended` -#}
    {% set columns = [] %}
    {% set described = namespace(in_columns=true, properties='') %}
    {% for row in run_query('describe extended ' ~ target).rows %}
        {% if not row[0] or row[0].startswith('#') %}
            {% set described.in_columns = false %}
        {% elif described.in_columns %}
            {% do columns.append({'name': row[0], 'dtype': row[1]}) %}
        {% elif row[0] == 'Table Properties' %}
            {% set described.properties = row[1] %}
        {% endif %}
    {% endfor %}
    {% do cdc_history_check_key_buckets(target, described.properties) %}
    {% set unchanged = [] %}
    {% for column in columns %}
        {% if column.dtype | lower == 'variant' %}
            {% do unchanged.append(
                'xxhash64(to_json(stored.' ~ column.name ~ ')) = xxhash64(to_json(replayed.' ~ column.name ~ '))') %}
        {% else %}
            {% do unchanged.append('stored.' ~ column.name ~ ' <=> replayed.' ~ column.name) %}
        {% endif %}
    {% endfor %}
    merge into {{ target }} as stored
    using {{ source }} as replayed
    on
        stored.table_id = replayed.table_id
        and stored.key_json = replayed.key_json
        and stored.version_number = replayed.version_number
        and ({{ scope | join(' or ') if scope else 'false' }})
    when matched and replayed.merge_action = 'delete' then delete
    when matched and not ({{ unchanged | join(' and ') }}) then update set
        {% for column in columns %}{{ column.name }} = replayed.{{ column.name }}{{ ', ' if not loop.last }}{% endfor %}
    when not matched and replayed.merge_action = 'upsert' then insert
        ({{ columns | map(attribute='name') | join(', ') }})
        values ({% for column in columns %}replayed.{{ column.name }}{{ ', ' if not loop.last }}{% endfor %})
{% endmacro %}
