{#
    Undo builds: every table the project's models write goes back to the version it had at
    `as_of` (a UTC timestamp, 'YYYY-MM-DD HH:MM:SS'), with Delta Lake's RESTORE. The watermark
    (cdc_load_batches) goes back with them, so the next `dbt build` processes again every batch
    landed since: the landing table is left as it is. A table created after `as_of` is left as
    it is too (named in the log; a --full-refresh rebuilds everything). Needs the table versions
    of `as_of` not to be vacuumed (cdc_maintain keeps a week by default).

        dbt run-operation cdc_restore --args "{as_of: '2026-11-26 06:00:00'}"
#}
{% macro cdc_restore(as_of) %}
    {% set parsed = none %}
    {% if as_of is string %}
        {% set parsed = modules.re.fullmatch('\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?', as_of | trim) %}
    {% endif %}
    {% if parsed is none %}
        {{ cdc_argument_error('cdc_restore', 'as_of', "a UTC timestamp 'YYYY-MM-DD HH:MM:SS'", as_of) }}
    {% endif %}
    {% set moment = modules.datetime.datetime.fromisoformat(as_of | trim) %}
    {% for relation in cdc_project_tables() %}
        {% set history = run_query('describe history ' ~ relation) %}
        {% set versions = [] %}
        {% for row in history.rows if row['timestamp'].replace(tzinfo=none) <= moment %}
            {% do versions.append(row['version'] | int) %}
        {% endfor %}
        {% set latest = history.columns['version'].values() | map('int') | max %}
        {% if not versions %}
            {{ log('cdc_restore: ' ~ relation ~ ' did not exist at ' ~ as_of ~ ': left as it is', info=true) }}
        {% elif versions | max == latest %}
            {{ log('cdc_restore: ' ~ relation ~ ' unchanged since ' ~ as_of ~ ' (version ' ~ latest ~ ')', info=true) }}
        {% else %}
            {% do run_query('restore table ' ~ relation ~ ' to version as of ' ~ versions | max) %}
            {{ log('cdc_restore: ' ~ relation ~ ' restored from version ' ~ latest ~ ' to ' ~ versions | max, info=true) }}
        {% endif %}
    {% endfor %}
{% endmacro %}
