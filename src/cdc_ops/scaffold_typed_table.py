"""Scaffold a typed table from what has been landed (like dbt-codegen's base models).

    python scripts/scaffold_typed_table.py shop.orders [--name orders] [--key-columns id]
                                                       [--project-dir DIR]

For the source table `table_id` (as cdc_history names it) this writes:
  - one line in dbt_project.yml, var cdc_typed_tables:  `orders: {table_id: shop.orders}`
  - models/marts/typed/orders_history.sql and orders_current.sql (one macro call each)
  - their entries in models/marts/typed/_typed__models.yml: every column seen so far with a
    description, and uniqueness tests on the key (current) and on key + version (history).
    The types are not written: the models take them, and columns added later, from what the
    envelopes declare (model cdc_typed_columns, macro cdc_typed_table_spec).
Then: dbt build --profiles-dir profiles --select +orders_history +orders_current

Run it again once the source has added columns (the typed build warns of columns its YAML does
not document): it adds their entries and leaves the rest of the YAML as it is.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from pathlib import Path

import yaml

from cdc_dbt_spark.connection import connect
from cdc_dbt_spark.settings import add_project_arguments, profiles_dir, project_vars, use_project

log = logging.getLogger("scaffold_typed_table")
TYPED_DIR = Path("models") / "marts" / "typed"
TYPED_YAML = "_typed__models.yml"
VAR_LINE = "  cdc_typed_tables:"
HEADER = "# Typed per-table models. Written by scripts/scaffold_typed_table.py; edit descriptions freely.\n"

SCD_HISTORY_COLUMNS = [
    ("key_json", "string", "The key as canonical JSON (see cdc_history)."),
    ("version_number", "int", "1 for the first version of the key, increasing in sequence order."),
    ("valid_from", "timestamp", "When this version became valid (inclusive)."),
    ("valid_to", "timestamp", "When it stopped being valid (exclusive); null while current."),
    ("is_current", "boolean", "True for the newest version of the key."),
    ("is_deleted", "boolean", "True when this version records that the row did not exist."),
    ("op", "string", "The operation that opened this version."),
    ("valid_from_sequence", "string", "Source sequence of the change that opened this version."),
    ("valid_to_sequence", "string", "Source sequence of the change that closed it; null while current."),
]
SCD_CURRENT_COLUMNS = [
    ("key_json", "string", "The key as canonical JSON."),
    ("valid_from", "timestamp", "When the current version became valid."),
    ("valid_from_sequence", "string", "Source sequence of the change that produced the current version."),
    ("op", "string", "The operation that produced the current version."),
]


def as_data(text: str) -> str:
    """`text` as dbt must read it back from YAML: dbt renders column names, descriptions and test
    arguments as Jinja, so a name from the source holding a Jinja delimiter is written as a
    Jinja string literal, which renders to exactly that name (never run as a call)."""
    if not any(delimiter in text for delimiter in ("{{", "{%", "{#")):
        return text
    return "{{ " + json.dumps(text) + " }}"  # a JSON string is a valid Jinja string literal


def default_name(table_id: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", table_id).strip("_").lower() or "table"


def string_literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def discover_columns(table_id: str, name: str, target: str | None, project_dir: Path) -> list[tuple[str, str]]:
    """The table's columns and Spark types as the typed models will see them: the project's own
    macro cdc_typed_table_spec (discovery from the rows built so far, since the table has no
    YAML yet), compiled and run by dbt with the table added to var cdc_typed_tables."""
    from dbt.cli.main import dbtRunner

    typed_tables = {
        **(project_vars(project=project_dir).get("cdc_typed_tables") or {}),
        name: {"table_id": table_id},
    }
    # the macro's ref() runs only when executing: dbt must be told of it (its hint line), and the
    # spec follows on a line of its own
    inline = f"-- depends_on: {{{{ ref('cdc_history') }}}}\n{{{{ tojson(cdc_typed_table_spec({json.dumps(name)})) }}}}"
    arguments = [
        *("--log-level", "none", "compile", "--inline", inline),
        *("--vars", json.dumps({"cdc_typed_tables": typed_tables})),
        *("--profiles-dir", str(profiles_dir()), "--project-dir", str(project_dir)),
        *(("--target", target) if target else ()),
    ]
    result = dbtRunner().invoke(arguments)
    if not result.success:
        raise SystemExit(
            f"dbt compile of cdc_typed_table_spec({name!r}) failed: {result.exception or 'see logs/dbt.log'}"
        )
    spec = json.loads(result.result.results[0].node.compiled_code.split("\n", 1)[1])
    return [(column, data_type) for column, data_type in spec["columns"]]


def discover(
    table_id: str, name: str, target: str | None, project_dir: Path
) -> tuple[list[tuple[str, str]], list[str], str]:
    """The table's columns and types, the key its messages carry and its source format."""
    columns = discover_columns(table_id, name, target, project_dir)
    connection = connect(target)
    schema = connection.schema
    if not columns:
        raise SystemExit(f"no rows of {table_id!r} in {schema}.cdc_history: land messages and run dbt build first")
    sample = connection.sql(
        f"select key_json, max(source_format) from {schema}.cdc_history where table_id = {string_literal(table_id)} "
        f"group by key_json limit 1"
    )
    key_columns = list(json.loads(sample[0][0]))
    return columns, key_columns, sample[0][1]


def add_config_line(project_dir: Path, name: str, table_id: str, key_columns: list[str] | None) -> None:
    project_file = project_dir / "dbt_project.yml"
    text = project_file.read_text()
    entry = {"table_id": table_id}
    if key_columns:
        entry["key_columns"] = key_columns
    line = f"    {name}: {json.dumps(entry, ensure_ascii=False)}\n"
    if re.search(rf"^    {re.escape(name)}:", text, flags=re.MULTILINE):
        # the entry and the YAML's key tests are the user's now: a key asked for that they do not
        # hold would be silently dropped, so the scaffold stops before it writes anything
        configured = (project_vars(project=project_dir).get("cdc_typed_tables") or {}).get(name) or {}
        configured_key = configured.get("key_columns")
        if key_columns and key_columns != configured_key:
            raise SystemExit(
                f"--key-columns {','.join(key_columns)}: dbt_project.yml already configures {name} "
                f"(key_columns: {configured_key or 'the key the messages carry'}); to change its key, "
                f"edit its entry there and the key tests of {name}_history and {name}_current in "
                f"{TYPED_DIR}/{TYPED_YAML}"
            )
        log.info("dbt_project.yml already configures %s; left as it is", name)
        return
    if VAR_LINE + " {}" in text:
        text = text.replace(VAR_LINE + " {}", VAR_LINE)
    if VAR_LINE not in text:
        raise SystemExit(f"dbt_project.yml has no `{VAR_LINE.strip()}` var to add {name} to")
    start = text.index(VAR_LINE) + len(VAR_LINE) + 1
    text = text[:start] + line + text[start:]
    project_file.write_text(text)


def column_entries(columns: list[tuple[str, str]], scd: list[tuple[str, str, str]], table_id: str) -> list[dict]:
    entries = [
        {"name": as_data(name), "description": as_data(f"Source column `{name}` of {table_id}.")} for name, _ in columns
    ]
    entries += [{"name": name, "data_type": data_type, "description": text} for name, data_type, text in scd]
    return entries


def write_models(
    project_dir: Path,
    name: str,
    table_id: str,
    columns: list[tuple[str, str]],
    key_columns: list[str],
    source_format: str,
) -> list[str]:
    """Writes the two model files and their YAML entries. Entries the YAML already has are kept
    as they are (descriptions and tests a user edited): only the source columns they do not list
    yet are added, before the SCD2 columns. Returns the names of the columns added to entries
    that existed."""
    typed_dir = project_dir / TYPED_DIR
    typed_dir.mkdir(parents=True, exist_ok=True)
    (typed_dir / f"{name}_history.sql").write_text(f"{{{{ cdc_typed_history('{name}') }}}}\n")
    (typed_dir / f"{name}_current.sql").write_text(f"{{{{ cdc_typed_current('{name}') }}}}\n")
    typed_yaml = typed_dir / TYPED_YAML
    document = yaml.safe_load(typed_yaml.read_text()) if typed_yaml.exists() else None
    document = document or {"version": 2, "models": []}
    existing = {model["name"]: model for model in document["models"]}
    key_names = [as_data(column) for column in key_columns]
    scaffolded = [
        {
            "name": f"{name}_history",
            "description": as_data(
                f"SCD type 2 history of `{table_id}` ({source_format}), one typed column per source "
                "column; see cdc_history for the meaning of the SCD2 columns."
            ),
            # one pass over the versions per build: unique versions, one current version per key
            # (the typed key: its current table is unique on it), chains that do not overlap; of
            # the keys of this table the build changed (none when it changed none)
            "data_tests": [
                {
                    "scd2_versions_are_valid": {
                        "arguments": {"key_columns": key_names},
                        "config": {"where": "__cdc_run_keys__"},
                    }
                }
            ],
            "columns": column_entries(columns, SCD_HISTORY_COLUMNS, table_id),
        },
        {
            "name": f"{name}_current",
            "description": as_data(
                f"The live rows of `{table_id}` ({source_format}), one typed column per source column."
            ),
            # the history's current versions, whose test holds one per key in every build: checked
            # whole in first and full builds (and with var cdc_test_scope: all), as cdc_current is
            "data_tests": [
                {"unique_combination": {"arguments": {"columns": key_names}, "config": {"where": "__cdc_run_whole__"}}}
            ],
            "columns": column_entries(columns, SCD_CURRENT_COLUMNS, table_id),
        },
    ]
    scd = {column for column, _, _ in SCD_HISTORY_COLUMNS + SCD_CURRENT_COLUMNS}
    added: set[str] = set()
    for model in scaffolded:
        if model["name"] not in existing:
            document["models"].append(model)
            continue
        entries = existing[model["name"]].setdefault("columns", [])
        listed = {entry["name"] for entry in entries}
        new_entries = [entry for entry in model["columns"] if entry["name"] not in listed]
        # new source columns go before the SCD2 columns, as the scaffold orders them
        at = next((number for number, entry in enumerate(entries) if entry["name"] in scd), len(entries))
        entries[at:at] = [entry for entry in new_entries if entry["name"] not in scd]
        entries += [entry for entry in new_entries if entry["name"] in scd]
        added |= {entry["name"] for entry in new_entries}
    typed_yaml.write_text(HEADER + yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=110))
    return sorted(added)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scaffold <name>_history and <name>_current for one source table.")
    parser.add_argument("table_id", help="the source table as cdc_history.table_id names it, e.g. shop.orders")
    parser.add_argument("--name", help="model name prefix (default: table_id made an identifier)")
    parser.add_argument("--key-columns", help="comma-separated key override (default: the key the messages carry)")
    parser.add_argument("--target", help="dbt target to read cdc_history from (default: the profile's)")
    add_project_arguments(parser)  # the project written into
    args = parser.parse_args(argv)
    project = use_project(args.project_dir, args.profiles_dir)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    name = args.name or default_name(args.table_id)
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise SystemExit(f"--name {name!r} must be a lower-case identifier")
    columns, key_columns, source_format = discover(args.table_id, name, args.target, project)
    override = [c.strip() for c in args.key_columns.split(",")] if args.key_columns else None
    add_config_line(project, name, args.table_id, override)
    added = write_models(project, name, args.table_id, columns, override or key_columns, source_format)
    if added:
        log.info("%s: documented %d new column(s): %s", name, len(added), ", ".join(added))
    log.info(
        "wrote %s_history and %s_current (%d columns); now: dbt build --profiles-dir profiles "
        "--select +%s_history +%s_current",
        name,
        name,
        len(columns),
        name,
        name,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
