"""Typed per-table models: scaffolded from what was landed, real columns and types, tested.

The scaffold writes into a copy of the project (never into this checkout), as a user would
run it in theirs: one configuration line, two one-line model files, their YAML with tests.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections import Counter
from pathlib import Path

import yaml

from cdc_dbt_spark.settings import use_project
from cdc_ops.scaffold_typed_table import main as scaffold
from cdc_testkit.encoders import dataworks_json
from cdc_testkit.harness import PROJECT_ROOT, write_jsonl
from cdc_testkit.scenario import Change


def change(kind: str, sequence: int, before=None, after=None, ddl=None) -> Change:
    return Change(kind, "shop", "orders", sequence, 1_600_000_000_000 + sequence * 1000, ("id",), before, after, ddl)


def copy_project(destination: Path) -> Path:
    destination.mkdir(parents=True)
    for name in ("dbt_project.yml", "profiles", "models", "macros", "seeds"):
        source = PROJECT_ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name)
        else:
            shutil.copy(source, destination / name)
    shutil.copytree(PROJECT_ROOT / "tests" / "generic", destination / "tests" / "generic")
    return destination


def hostile_table(schema: str) -> tuple[str, list[str], list[Change]]:
    """A source table whose names are Jinja calls: rendered, its key column would drop
    cdc_events and the other names would stop dbt. Plus quotes, backticks, `--`, a Spark
    variable, a newline and non-ASCII in one name. (table name, column names, changes)"""
    drop = f"{{% do run_query('drop table {schema}.cdc_events') %}}"
    stop = "{{ exceptions.raise_compiler_error('a column name was rendered') }}"
    odd = "it's `odd`; --${x}\n\u00e9"
    table = "orders{{ exceptions.raise_compiler_error('a table name was rendered') }}"
    rows = [{drop: 1, stop: "a", odd: "b"}, {drop: 2, stop: "c", odd: None}]
    changes = [
        Change("insert", "shop", table, n, 1_600_000_000_000 + n * 1000, (drop,), None, row)
        for n, row in enumerate(rows, 1)
    ]
    return table, [drop, stop, odd], changes


def test_scaffold_typed_table_from_landed_rows(project, tmp_path: Path) -> None:
    """Beside shop.orders, a table with hostile names: names are data in the scaffolded YAML
    (dbt renders column names, descriptions and test arguments) and in the typed tables."""
    first = {"id": 1, "name": "a", "amount": 1.5, "active": True, "updated": 1_600_000_000_123}
    second = {"id": 2, "name": "b", "amount": 2.0, "active": False, "updated": 1_600_000_001_000}
    changes = [
        change("insert", 1, after=first),
        change("insert", 2, after=second),
        # a column added by DDL exists from the version that carries it on
        change("ddl", 3, ddl="alter table orders add column `note; drop` text"),
        change("update", 4, before=first, after=first | {"amount": 3.25, "note; drop": "added"}),
        change("delete", 5, before=second),
    ]
    hostile, hostile_columns, hostile_changes = hostile_table(project.schema)
    messages = [m for c in changes + hostile_changes for m in dataworks_json(c)]
    project.land("dataworks_json", write_jsonl(tmp_path / "orders.jsonl", messages))
    project.build(tests=False)

    copy = copy_project(tmp_path / "project")
    project.activate()
    try:
        assert scaffold(["shop.orders", "--project-dir", str(copy)]) == 0
        assert scaffold([f"shop.{hostile}", "--name", "hostile", "--project-dir", str(copy)]) == 0
    finally:  # a command's main fixes its process's project (and folder): this process's is the checkout
        use_project(PROJECT_ROOT)
        os.chdir(PROJECT_ROOT)

    # one configuration line, two one-line models, their YAML with the key tests
    config = yaml.safe_load((copy / "dbt_project.yml").read_text())["vars"]["cdc_typed_tables"]
    assert config["shop_orders"] == {"table_id": "shop.orders"}
    typed = copy / "models" / "marts" / "typed"
    assert (typed / "shop_orders_history.sql").read_text() == "{{ cdc_typed_history('shop_orders') }}\n"
    assert (typed / "shop_orders_current.sql").read_text() == "{{ cdc_typed_current('shop_orders') }}\n"
    models = {m["name"]: m for m in yaml.safe_load((typed / "_typed__models.yml").read_text())["models"]}
    history_tests = models["shop_orders_history"]["data_tests"]
    assert {"unique_combination": {"arguments": {"columns": ["id", "version_number"]}}} in history_tests
    assert models["shop_orders_current"]["data_tests"] == [{"unique_combination": {"arguments": {"columns": ["id"]}}}]
    types = {c["name"]: c["data_type"] for c in models["shop_orders_history"]["columns"]}
    assert {k: types[k] for k in ("id", "name", "amount", "active", "updated", "note; drop")} == {
        "id": "bigint",
        "name": "string",
        "amount": "double",
        "active": "boolean",
        "updated": "timestamp",
        "note; drop": "string",
    }
    assert all(c.get("description") for m in models.values() for c in m["columns"])

    result = project.dbt(
        "build",
        "--select",
        "shop_orders_history",
        "shop_orders_current",
        "hostile_history",
        "hostile_current",
        "--target-path",
        str(tmp_path / "target"),
        project_dir=copy,
    )
    ran = Counter(str(r.node.resource_type) for r in result.result.results)
    assert ran == {"model": 4, "test": 6}
    project.dbt("docs", "generate", "--target-path", str(tmp_path / "target"), project_dir=copy)

    history = project.query(
        "select id, version_number, is_deleted, amount, `note; drop`, updated from {schema}.shop_orders_history "
        "order by id, version_number"
    )
    assert history == [
        (1, 1, False, 1.5, None, dt.datetime(2020, 9, 13, 12, 26, 40, 123000)),
        (1, 2, False, 3.25, "added", dt.datetime(2020, 9, 13, 12, 26, 40, 123000)),
        (2, 1, False, 2.0, None, dt.datetime(2020, 9, 13, 12, 26, 41)),
        (2, 2, True, 2.0, None, dt.datetime(2020, 9, 13, 12, 26, 41)),
    ]
    assert project.query("select id, name, active, `note; drop` from {schema}.shop_orders_current") == [
        (1, "a", True, "added")
    ]
    described = dict(
        (name, data_type) for name, data_type, *_ in project.query("describe {schema}.shop_orders_current")
    )
    assert described["id"] == "bigint" and described["updated"] == "timestamp" and described["active"] == "boolean"

    # the hostile names: nothing ran, every name arrived whole
    drop = hostile_columns[0]
    assert project.query("select count(*) from {schema}.cdc_events where key_json is not null") == [(6,)]
    assert set(hostile_columns) <= {row[0] for row in project.query("describe {schema}.hostile_current")}
    quoted = "`" + drop.replace("`", "``").replace("{", "{{").replace("}", "}}") + "`"  # as query() formats it
    assert project.query(f"select {quoted} from {{schema}}.hostile_current order by 1") == [(1,), (2,)]
    catalog = (tmp_path / "target" / "catalog.json").read_text()
    assert "a column name was rendered" in catalog  # documented as it is
    assert "a table name was rendered" in (tmp_path / "target" / "manifest.json").read_text()
