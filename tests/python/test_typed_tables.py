"""Typed per-table models: scaffolded from what was landed, real columns and types, tested.

The scaffold writes into a copy of the project (never into this checkout), as a user would
run it in theirs: one configuration line, two one-line model files, their YAML with tests.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import os
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from cdc_dbt_spark.settings import use_project
from cdc_ops.scaffold_typed_table import TYPED_DIR, add_config_line, write_models
from cdc_ops.scaffold_typed_table import main as scaffold
from cdc_testkit.avro_files import write_dts_avro
from cdc_testkit.encoders import canal_json, cdl_json, dataworks_json, debezium_json, dts_avro
from cdc_testkit.harness import NOT_SENT, PROJECT_ROOT, write_jsonl
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
    assert models["shop_orders_history"]["data_tests"] == [
        {"scd2_versions_are_valid": {"arguments": {"key_columns": ["id"]}, "config": {"where": "__cdc_run_keys__"}}}
    ]
    assert models["shop_orders_current"]["data_tests"] == [
        {"unique_combination": {"arguments": {"columns": ["id"]}, "config": {"where": "__cdc_run_whole__"}}}
    ]
    # the types are not written: the models take them from what the envelopes declare
    columns = {c["name"]: c for c in models["shop_orders_history"]["columns"]}
    assert {"id", "name", "amount", "active", "updated", "note; drop"} <= set(columns)
    assert not any("data_type" in columns[c] for c in ("id", "name", "amount", "active", "updated", "note; drop"))
    assert all(c.get("description") for m in models.values() for c in m["columns"])

    logged: list[str] = []
    result = project.dbt(
        "build",
        "--select",
        "cdc_typed_columns",  # the typed models take their columns from it: hostile names pass through it too
        "shop_orders_history",
        "shop_orders_current",
        "hostile_history",
        "hostile_current",
        "--target-path",
        str(tmp_path / "target"),
        # the whole typed tables checked, not only the keys of the last build (none: no batch is new)
        "--vars",
        "{cdc_test_scope: all}",
        project_dir=copy,
        callbacks=[lambda event: logged.append(event.info.msg)],
    )
    ran = Counter(str(r.node.resource_type) for r in result.result.results)
    # cdc_typed_columns' test and two per typed table: the history's (hostile key columns quoted) and the current's
    assert ran == {"model": 5, "test": 5}
    assert not [line for line in logged if "does not document" in line]  # the scaffold documented every column
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
    described = dict(row[:2] for row in project.query("describe {schema}.shop_orders_history"))
    assert {k: described[k] for k in ("id", "name", "amount", "active", "updated", "note; drop")} == {
        "id": "bigint",
        "name": "string",
        "amount": "double",
        "active": "boolean",
        "updated": "timestamp",
        "note; drop": "string",
    }

    # the hostile names: nothing ran, every name arrived whole
    drop = hostile_columns[0]
    assert project.query("select count(*) from {schema}.cdc_events where key_json is not null") == [(6,)]
    assert set(hostile_columns) <= {row[0] for row in project.query("describe {schema}.hostile_current")}
    quoted = "`" + drop.replace("`", "``").replace("{", "{{").replace("}", "}}") + "`"  # as query() formats it
    # declared STRING (the encoder's type for a column it does not know), so text
    assert project.query(f"select {quoted} from {{schema}}.hostile_current order by 1") == [("1",), ("2",)]
    catalog = (tmp_path / "target" / "catalog.json").read_text()
    assert "a column name was rendered" in catalog  # documented as it is
    assert "a table name was rendered" in (tmp_path / "target" / "manifest.json").read_text()

    # a build whose new batch changes shop.orders only: its history's test checks the keys the
    # build changed (a query), the hostile table's and the project's sample's send none
    later = first | {"amount": 3.25, "note; drop": "added"}
    project.land(
        "dataworks_json",
        write_jsonl(tmp_path / "later.jsonl", dataworks_json(change("update", 6, later, later | {"amount": 4.0}))),
    )
    result = project.dbt(
        "build", "--exclude-resource-type", "unit_test", "--target-path", str(tmp_path / "target"), project_dir=copy
    )
    typed_histories = ("shop_orders_history", "hostile_history", "oracle_sample_history")
    history_tests = {
        r.node.attached_node.split(".")[-1]: r
        for r in result.result.results
        if r.node.name.startswith("scd2_versions_are_valid") and r.node.attached_node.split(".")[-1] in typed_histories
    }
    assert {name: str(r.status) for name, r in history_tests.items()} == dict.fromkeys(typed_histories, "pass")
    assert history_tests["shop_orders_history"].adapter_response.get("_message") != NOT_SENT
    assert history_tests["hostile_history"].adapter_response.get("_message") == NOT_SENT
    assert history_tests["oracle_sample_history"].adapter_response.get("_message") == NOT_SENT
    assert project.query("select amount from {schema}.shop_orders_current where id = 1") == [(4.0,)]


# --- typed tables follow the declared columns (#38) -----------------------------------------
# Per format family whose envelopes declare columns, one table whose source adds a column
# (`added`, from change 3), widens one (`qty`, from change 4, with a value only the wider type
# holds) and drops one (`gone`, from change 5). Each family declares it in its own words.
EVOLVING_DECLARATIONS = {
    # DataWorks has one integer type: the widened column stays LONG
    "dataworks_json": (
        {"id": "LONG", "qty": "LONG", "gone": "STRING"},
        {"qty": "LONG", "added": "STRING"},
    ),
    "debezium_json": (
        {"id": "int64", "qty": "int32", "gone": "string"},
        {"qty": "int64", "added": "string"},
    ),
    "canal_json": (
        {"id": "bigint(20)", "qty": "int(11)", "price": "decimal(5,2)", "gone": "varchar(8)"},
        {"qty": "bigint(20)", "price": "decimal(12,2)", "added": "varchar(16)"},
    ),
    # DTS declares each value's kind (its union branch): integers of any width are Integer
    "dts_avro": (
        {"id": "Integer", "qty": "Integer", "gone": "Character"},
        {"qty": "Integer", "added": "Character"},
    ),
}
# the table ids as each format names the table (Debezium's PostgreSQL connector adds its database)
EVOLVING_TABLES = {
    "dataworks_json": "dw.evolve",
    "debezium_json": "pg.dbz.evolve",
    "canal_json": "canal.evolve",
    "dts_avro": "dts.evolve",
}
# what the typed tables must say: each declaration's type, the widest where it widened
EVOLVED_TYPES = {
    "dataworks_json": {"id": "bigint", "qty": "bigint", "gone": "string", "added": "string"},
    "debezium_json": {"id": "bigint", "qty": "bigint", "gone": "string", "added": "string"},
    "dts_avro": {"id": "bigint", "qty": "bigint", "gone": "string", "added": "string"},
    "canal_json": {
        "id": "bigint",
        "qty": "bigint",
        "price": "decimal(12,2)",
        "gone": "string",
        "added": "string",
    },
}


def evolving_changes(source_format: str) -> list[tuple[Change, dict[str, str]]]:
    """The source's changes, each with the column types its message declares."""
    database, table = EVOLVING_TABLES[source_format].split(".")[-2:]
    first, widened = EVOLVING_DECLARATIONS[source_format]
    with_price = "price" in first
    added = first | widened  # `added` from change 3, `qty` (and `price`) wider from change 4
    dropped = {name: kind for name, kind in added.items() if name != "gone"}

    def row(key: int, qty: int, gone: str | None, added_value: str | None, price: str | None) -> dict:
        values = {"id": key, "qty": qty}
        if with_price:
            values["price"] = price
        if gone is not None:
            values["gone"] = gone
        if added_value is not None:
            values["added"] = added_value
        return values

    def declared(sequence: int) -> dict[str, str]:
        types = first if sequence < 3 else dropped if sequence >= 5 else added
        if sequence == 3:  # `added` is there, `qty` not yet wider
            types = first | {"added": widened["added"]}
        return {name: kind for name, kind in types.items() if name != "price" or with_price}

    one = [row(1, 5, "x", None, "1.50"), row(1, 6, "x", "new", "2.25"), row(1, 8, None, "c", "3.00")]
    two = [row(2, 7, "y", None, "4.75"), row(2, 3_000_000_000, "y", "b", "12345.67")]
    three = row(3, 9, None, "d", "0.05")
    changes = [
        Change("insert", database, table, 1, 1_600_000_000_000, ("id",), None, one[0]),
        Change("insert", database, table, 2, 1_600_000_001_000, ("id",), None, two[0]),
        Change("update", database, table, 3, 1_600_000_002_000, ("id",), one[0], one[1]),
        Change("update", database, table, 4, 1_600_000_003_000, ("id",), two[0], two[1]),
        Change("update", database, table, 5, 1_600_000_004_000, ("id",), one[1], one[2]),
        Change("insert", database, table, 6, 1_600_000_005_000, ("id",), None, three),
        Change(
            "delete", database, table, 7, 1_600_000_006_000, ("id",), {k: v for k, v in two[1].items() if k != "gone"}
        ),
    ]
    return [(c, declared(c.sequence)) for c in changes]


# --- every Kafka Connect type (#61) ----------------------------------------------------------
# A Debezium and a CDL stream (one table each) whose messages declare every type Kafka Connect's
# JSON converter writes, as it names them. Change 3 widens `ratio` float -> double, `price`
# Decimal precision 5 -> 12 and `qty` int32 -> int64, with values only the wider types hold;
# `misfit` is declared int32 and carries text in key 2. Their typed tables are `<name>_current`
# only (the history macro takes its types from the same spec).
def kafka_connect_type(physical: str, logical: str, **parameters: str) -> dict:
    field = {"type": physical, "name": logical, "version": 1}
    return field | ({"parameters": parameters} if parameters else {})


def decimal_field(scale: int, precision: int | None = None) -> dict:
    parameters = {"scale": str(scale)} | ({"connect.decimal.precision": str(precision)} if precision else {})
    return kafka_connect_type("bytes", "org.apache.kafka.connect.data.Decimal", **parameters)


def unscaled(value: int) -> str:
    """A Kafka Connect Decimal as the JSON converter sends it: its unscaled value, big-endian two's
    complement, in base64."""
    return base64.b64encode(value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True)).decode()


KAFKA_CONNECT_TABLES = {"debezium_json": ("dbz_types", "pg.kc.types"), "cdl_json": ("cdl_types", "kc.types")}
KAFKA_CONNECT_DECLARED: dict[str, str | dict] = {
    "id": "int64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "qty": "int32",
    "ratio": "float",
    "f64": "double",
    "flag": "boolean",
    "name": "string",
    "raw": "bytes",
    "price": decimal_field(2, 5),
    "amount": decimal_field(3),  # no precision declared
    "day": kafka_connect_type("int32", "org.apache.kafka.connect.data.Date"),
    "at_time": kafka_connect_type("int32", "org.apache.kafka.connect.data.Time"),
    "at": kafka_connect_type("int64", "org.apache.kafka.connect.data.Timestamp"),
    "dbz_day": kafka_connect_type("int32", "io.debezium.time.Date"),
    "dbz_time": kafka_connect_type("int32", "io.debezium.time.Time"),
    "dbz_micro_time": kafka_connect_type("int64", "io.debezium.time.MicroTime"),
    "dbz_nano_time": kafka_connect_type("int64", "io.debezium.time.NanoTime"),
    "dbz_at": kafka_connect_type("int64", "io.debezium.time.Timestamp"),
    "dbz_micro_at": kafka_connect_type("int64", "io.debezium.time.MicroTimestamp"),
    "dbz_nano_at": kafka_connect_type("int64", "io.debezium.time.NanoTimestamp"),
    "zoned_at": kafka_connect_type("string", "io.debezium.time.ZonedTimestamp"),
    "zoned_time": kafka_connect_type("string", "io.debezium.time.ZonedTime"),
    "year": kafka_connect_type("int32", "io.debezium.time.Year"),
    "any_scale": kafka_connect_type("struct", "io.debezium.data.VariableScaleDecimal"),
    "doc": kafka_connect_type("string", "io.debezium.data.Json"),
    "misfit": "int32",
}
KAFKA_CONNECT_WIDENED = {"qty": "int64", "ratio": "double", "price": decimal_field(2, 12)}
# the typed tables' column types and the current row of key 1 (after change 3)
KAFKA_CONNECT_TYPED = {
    "id": ("bigint", 1),
    "i8": ("tinyint", -5),
    "i16": ("smallint", 300),
    "i32": ("int", 70000),
    "qty": ("bigint", 3_000_000_000),
    "ratio": ("double", 1e-07),
    "f64": ("double", 2.25),
    "flag": ("boolean", True),
    "name": ("string", "a"),
    "raw": ("binary", bytearray(b"\x00\xff")),
    "price": ("decimal(12,2)", decimal.Decimal("1234567.89")),
    "amount": ("decimal(38,3)", decimal.Decimal("-1.230")),
    "day": ("date", dt.date(2022, 1, 8)),
    "at_time": ("string", "12:34:56.789"),
    "at": ("timestamp", dt.datetime(2020, 9, 13, 12, 26, 40, 123000)),
    "dbz_day": ("date", dt.date(2022, 1, 9)),
    "dbz_time": ("string", "01:02:03.004"),
    "dbz_micro_time": ("string", "01:02:03.000005"),
    "dbz_nano_time": ("string", "01:02:03.000000006"),
    "dbz_at": ("timestamp", dt.datetime(2020, 9, 13, 12, 26, 40, 123000)),
    "dbz_micro_at": ("timestamp", dt.datetime(2020, 9, 13, 12, 26, 40, 123456)),
    "dbz_nano_at": ("timestamp", dt.datetime(2020, 9, 13, 12, 26, 40, 123456)),
    "zoned_at": ("timestamp", dt.datetime(2020, 9, 13, 12, 26, 40, 500000)),
    "zoned_time": ("string", "12:26:40+02:00"),
    "year": ("int", 2024),
    "any_scale": ("decimal(38,18)", decimal.Decimal("1.234500000000000000")),
    "doc": ("string", '{"a":1}'),
    "misfit": ("int", 4),
}


def kafka_connect_changes(source_format: str) -> list[tuple[Change, dict]]:
    """Changes 1-3 of the table, each with the declaration its messages carry."""
    database, table = KAFKA_CONNECT_TABLES[source_format][1].split(".")[-2:]
    first = {
        "id": 1,
        "i8": -5,
        "i16": 300,
        "i32": 70000,
        "qty": 5,
        "ratio": 0.5,
        "f64": 2.25,
        "flag": True,
        "name": "a",
        "raw": "AP8=",
        "price": unscaled(12345),
        "amount": unscaled(-1230),
        "day": 19000,
        "at_time": 45_296_789,
        "at": 1_600_000_000_123,
        "dbz_day": 19001,
        "dbz_time": 3_723_004,
        "dbz_micro_time": 3_723_000_005,
        "dbz_nano_time": 3_723_000_000_006,
        "dbz_at": 1_600_000_000_123,
        "dbz_micro_at": 1_600_000_000_123_456,
        "dbz_nano_at": 1_600_000_000_123_456_789,
        "zoned_at": "2020-09-13T14:26:40.5+02:00",
        "zoned_time": "12:26:40+02:00",
        "year": 2024,
        "any_scale": {"scale": 4, "value": unscaled(12345)},
        "doc": '{"a":1}',
        "misfit": 4,
    }
    widened = first | {"qty": 3_000_000_000, "ratio": 1e-07, "price": unscaled(123_456_789)}
    second = first | {"id": 2, "flag": False, "misfit": "n/a"}
    wider = KAFKA_CONNECT_DECLARED | KAFKA_CONNECT_WIDENED
    return [
        (Change("insert", database, table, 1, 1_600_000_000_000, ("id",), None, first), KAFKA_CONNECT_DECLARED),
        (Change("insert", database, table, 2, 1_600_000_001_000, ("id",), None, second), KAFKA_CONNECT_DECLARED),
        (Change("update", database, table, 3, 1_600_000_002_000, ("id",), first, widened), wider),
    ]


def declare(source_format: str, message: dict | None, types: dict[str, str | dict]) -> dict | None:
    """`message` with its column declaration replaced by `types`, in its format's words."""
    if message is None:  # a Debezium tombstone
        return message
    if source_format == "dataworks_json":
        if message["schema"].get("dataColumn"):
            message["schema"]["dataColumn"] = [{"name": n, "type": t} for n, t in types.items()]
    elif source_format in ("debezium_json", "cdl_json"):  # a type name, or a Kafka Connect field schema
        for field in message["schema"]["fields"]:
            if field["field"] in ("before", "after", "data"):
                field["fields"] = [
                    ({"type": t} if isinstance(t, str) else t) | {"optional": True, "field": n}
                    for n, t in types.items()
                ]
    elif source_format == "canal_json" and message.get("mysqlType") is not None:
        message["mysqlType"] = dict(types)
    return message


def evolving_messages(source_format: str, changes: list[tuple[Change, dict]]) -> list[dict | None]:
    encode = {
        "dataworks_json": dataworks_json,
        "debezium_json": debezium_json,
        "cdl_json": cdl_json,
        "canal_json": canal_json,
        "dts_avro": dts_avro,
    }
    return [declare(source_format, m, types) for change, types in changes for m in encode[source_format](change)]


def write_messages(source_format: str, messages: list[dict | None], folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    if source_format == "dts_avro":
        return write_dts_avro(messages, folder / "dts_avro.txt")
    return write_jsonl(folder / f"{source_format}.jsonl", messages)


def expected_typed_history(changes: list[Change], columns: list[str]) -> list[tuple]:
    """(id, version_number, is_deleted, *columns) of the typed history: each change opens a
    version of its key; a delete's version holds the row as it was deleted."""
    versions: dict[int, list[tuple]] = {}
    for change in changes:
        image = change.after if change.after is not None else change.before
        values = tuple(None if image.get(c) is None else image[c] for c in columns)
        key = image["id"]
        versions.setdefault(key, []).append((change.kind == "delete", values))
    return [
        (key, number, deleted, *values)
        for key in sorted(versions)
        for number, (deleted, values) in enumerate(versions[key], 1)
    ]


def test_typed_tables_follow_declared_columns(project, tmp_path: Path) -> None:
    """Each family's stream is landed shuffled, in three loads with a build after each: the typed
    tables gain the added column, keep the dropped one (null from the version without it) and
    take the widened type; a full refresh builds the same. Then a narrowing and an incompatible
    change stop their typed models, naming table, column, old and new type, until
    `column_types` decides."""
    copy = copy_project(tmp_path / "project")
    for sample in (copy / TYPED_DIR).glob("oracle_sample_*.sql"):  # the project's own typed table: not this test's
        sample.unlink()
    names = {source_format: source_format.split("_")[0] for source_format in EVOLVING_TABLES}
    for name in names.values():
        (copy / TYPED_DIR / f"{name}_history.sql").write_text(f"{{{{ cdc_typed_history('{name}') }}}}\n")
        (copy / TYPED_DIR / f"{name}_current.sql").write_text(f"{{{{ cdc_typed_current('{name}') }}}}\n")
    for name, _ in KAFKA_CONNECT_TABLES.values():
        (copy / TYPED_DIR / f"{name}_current.sql").write_text(f"{{{{ cdc_typed_current('{name}') }}}}\n")
    typed_tables = {names[f]: {"table_id": table_id} for f, table_id in EVOLVING_TABLES.items()}
    typed_tables |= {name: {"table_id": table_id} for name, table_id in KAFKA_CONNECT_TABLES.values()}

    def build(*args: str, typed: dict = typed_tables, check: bool = True, callbacks: list | None = None):
        return project.dbt(
            "build",
            "--exclude-resource-type",
            "unit_test",
            *args,
            "--vars",
            json.dumps({"cdc_typed_tables": typed}),
            "--target-path",
            str(tmp_path / "target"),
            project_dir=copy,
            check=check,
            callbacks=callbacks,
        )

    streams = {f: evolving_changes(f) for f in EVOLVING_TABLES}
    rng = random.Random(38)
    loads: list[list[tuple[str, dict | None]]] = [[], [], []]
    for source_format, changes in [*streams.items(), *((f, kafka_connect_changes(f)) for f in KAFKA_CONNECT_TABLES)]:
        messages = evolving_messages(source_format, changes)
        rng.shuffle(messages)
        # CDL's stream lands in the first load (a landing is a Spark job): its types are Debezium's,
        # which spreads over the three
        parts = 1 if source_format == "cdl_json" else 3
        for number, message in enumerate(messages):
            loads[number * parts // len(messages)].append((source_format, message))
    for number, load in enumerate(loads):
        for source_format in [*EVOLVING_TABLES, "cdl_json"]:
            messages = [m for f, m in load if f == source_format]
            if messages:
                project.land(source_format, write_messages(source_format, messages, tmp_path / f"{number}"))
        build("--exclude-resource-type", "test")

    def typed_state() -> dict[str, tuple]:
        state = {}
        for source_format, name in names.items():
            columns = list(EVOLVED_TYPES[source_format])[1:]
            quoted = ", ".join(f"`{c}`" for c in columns)
            history = project.query(
                f"select id, version_number, is_deleted, {quoted} from {{schema}}.{name}_history "
                "order by id, version_number"
            )
            history = [tuple(str(v) if isinstance(v, decimal.Decimal) else v for v in row) for row in history]
            described = {row[0]: row[1] for row in project.query(f"describe {{schema}}.{name}_current")}
            current = project.query(f"select id, {quoted} from {{schema}}.{name}_current order by id")
            state[source_format] = (history, described, len(current))
        return state

    incremental = typed_state()
    for source_format, (history, described, live_rows) in incremental.items():
        columns = list(EVOLVED_TYPES[source_format])[1:]
        assert {c: described[c] for c in EVOLVED_TYPES[source_format]} == EVOLVED_TYPES[source_format], source_format
        changes = [change for change, _ in streams[source_format]]
        expected = expected_typed_history(changes, columns)
        if "price" in columns:  # the decimals as the typed table's scale prints them
            at = 3 + columns.index("price")
            expected = [(*row[:at], f"{float(row[at]):.2f}", *row[at + 1 :]) for row in expected]
        assert history == expected, source_format
        assert live_rows == 2, source_format  # keys 1 and 3; 2 was deleted

    # every Kafka Connect type as declared, the widened ones wider; text declared int32 is null
    def kafka_connect_state() -> dict[str, tuple]:
        state = {}
        for source_format, (name, table_id) in KAFKA_CONNECT_TABLES.items():
            columns = [f"`{c}`" for c in KAFKA_CONNECT_TYPED]
            types = [f"typeof({c})" for c in columns]
            rows = project.query(f"select {', '.join(columns + types)} from {{schema}}.{name}_current order by id")
            declarations = project.query(
                "select source_column, declared_type from {schema}.cdc_typed_columns "
                f"where table_id = '{table_id}' and source_column in ('price', 'ratio') "
                "group by source_column, declared_type order by source_column, min(first_sequence)"
            )
            state[source_format] = ([row[: len(columns)] for row in rows], rows[0][len(columns) :], declarations)
        return state

    kafka_connect = kafka_connect_state()
    decimal_name = "org.apache.kafka.connect.data.Decimal"
    key_1 = tuple(value for _, value in KAFKA_CONNECT_TYPED.values())
    # key 2 keeps the values of its declaration (float, decimal precision 5) in the wider columns
    key_2 = dict(zip(KAFKA_CONNECT_TYPED, key_1, strict=True)) | {
        "id": 2,
        "qty": 5,
        "ratio": 0.5,
        "flag": False,
        "price": decimal.Decimal("123.45"),
        "misfit": None,
    }
    for source_format, (current, types, declarations) in kafka_connect.items():
        assert dict(zip(KAFKA_CONNECT_TYPED, types, strict=True)) == {c: t for c, (t, _) in KAFKA_CONNECT_TYPED.items()}
        assert current == [key_1, tuple(key_2.values())], source_format
        assert declarations == [
            ("price", f"{decimal_name}(scale=2,connect.decimal.precision=5)"),
            ("price", f"{decimal_name}(scale=2,connect.decimal.precision=12)"),
            ("ratio", "float"),
            ("ratio", "double"),
        ], source_format

    build("--full-refresh")
    assert typed_state() == incremental
    assert kafka_connect_state() == kafka_connect

    # a narrowing (Canal's qty declared int again) and an incompatible change (DataWorks' qty
    # declared STRING): their typed models stop, naming table, column, old and new type
    later = {
        "canal_json": {"id": "bigint(20)", "qty": "int(11)", "price": "decimal(12,2)", "added": "varchar(16)"},
        "dataworks_json": {"id": "LONG", "qty": "STRING", "added": "STRING"},
    }
    for source_format, types in later.items():
        database, table = EVOLVING_TABLES[source_format].split(".")[-2:]
        before = {"id": 3, "qty": 9, "added": "d"} | ({"price": "0.05"} if "price" in types else {})
        after = before | {"qty": 10 if source_format == "canal_json" else "ten"}
        change = Change("update", database, table, 8, 1_600_000_007_000, ("id",), before, after)
        messages = evolving_messages(source_format, [(change, types)])
        project.land(source_format, write_messages(source_format, messages, tmp_path / "later"))
    # and in the Kafka Connect tables qty is declared int32 again, after int64 (from change 3)
    for source_format, (_, table_id) in KAFKA_CONNECT_TABLES.items():
        database, table = table_id.split(".")[-2:]
        widened = kafka_connect_changes(source_format)[2][0].after
        change = Change("update", database, table, 8, 1_600_000_007_000, ("id",), widened, widened | {"qty": 6})
        types = KAFKA_CONNECT_DECLARED | KAFKA_CONNECT_WIDENED | {"qty": "int32"}
        messages = evolving_messages(source_format, [(change, types)])
        project.land(source_format, write_messages(source_format, messages, tmp_path / "later_kafka_connect"))
    result = build("--exclude-resource-type", "test", check=False)
    failed = {str(r.node.name): r.message for r in result.result.results if str(r.status) == "error"}
    kafka_connect_models = {f"{name}_current" for name, _ in KAFKA_CONNECT_TABLES.values()}
    assert (
        set(failed)
        == {"canal_history", "canal_current", "dataworks_history", "dataworks_current"} | kafka_connect_models
    )
    # the narrowing is reported where the narrower type was declared again (change 8), not where
    # it was first declared (change 1)
    for name, table_id, declared in [
        ("canal", "canal.evolve", "int(11)"),
        *((name, table_id, "int32") for name, table_id in KAFKA_CONNECT_TABLES.values()),
    ]:
        first, latest = project.query(
            f"select min(sequence_key), max(sequence_key) from {{schema}}.cdc_events where table_id = '{table_id}'"
        )[0]
        assert (
            f"typed table '{name}' ({table_id}): column 'qty' changes from bigint to int "
            f"(declared {declared}, from sequence {latest}), narrower than the type it has so far"
        ) in failed[f"{name}_current"]
        assert first not in failed[f"{name}_current"]
    assert (
        "typed table 'dataworks' (dw.evolve): column 'qty' changes from bigint to string" in failed["dataworks_current"]
    )
    # the views keep their last good shape
    assert dict(row[:2] for row in project.query("describe {schema}.canal_current"))["qty"] == "bigint"
    assert dict(row[:2] for row in project.query("describe {schema}.dataworks_current"))["qty"] == "bigint"

    # the user decides: Canal's qty takes the declared int, DataWorks' becomes text
    decided = typed_tables | {
        "canal": {"table_id": "canal.evolve", "column_types": {"qty": "int"}},
        "dataworks": {"table_id": "dw.evolve", "column_types": {"qty": "string"}},
    }
    decided |= {
        name: {"table_id": table_id, "column_types": {"qty": "bigint"}}
        for name, table_id in KAFKA_CONNECT_TABLES.values()
    }
    logged: list[str] = []
    build("--select", "path:models/marts/typed", typed=decided, callbacks=[lambda event: logged.append(event.info.msg)])
    # this test's typed models have no YAML: every column is one the build says to document
    assert any(
        "typed table 'canal' (canal.evolve): canal_current has columns its YAML does not document: "
        '"added", "gone", "id", "price", "qty". Run scripts/scaffold_typed_table.py canal.evolve --name canal again'
        in line
        for line in logged
    ), logged
    assert project.query("select qty from {schema}.canal_current where id = 3") == [(10,)]
    assert dict(row[:2] for row in project.query("describe {schema}.canal_current"))["qty"] == "int"
    assert project.query("select id, qty from {schema}.dataworks_current order by id") == [(1, "8"), (3, "ten")]
    for name, table_id in KAFKA_CONNECT_TABLES.values():
        assert project.query(f"select qty, misfit from {{schema}}.{name}_current order by id") == [(6, 4), (5, None)]
        # the text declared int32 is null in the typed tables, and the build says why
        assert any(
            f"typed table '{name}' ({table_id}): column 'misfit' has values of type " in line
            and "declared int32 (int, sequence " in line
            and f"{name}_current reads null where its column type (int) does not hold a value; cdc_history keeps them"
            in line
            for line in logged
        ), [line for line in logged if "misfit" in line]


def test_scaffold_run_again_documents_new_columns_and_keeps_edits(tmp_path: Path) -> None:
    """Run again after the source added a column, the scaffold adds its entries (before the SCD2
    columns) and leaves what the YAML already said: descriptions and tests a user edited."""
    typed_yaml = tmp_path / TYPED_DIR / "_typed__models.yml"

    def models() -> dict[str, dict]:
        return {m["name"]: m for m in yaml.safe_load(typed_yaml.read_text())["models"]}

    first = [("id", "bigint"), ("name", "string")]
    assert write_models(tmp_path, "orders", "shop.orders", first, ["id"], "dataworks_json") == []
    edited = models()
    edited["orders_history"]["columns"][1]["description"] = "The customer's name, as the shop spells it."
    edited["orders_current"]["data_tests"].append("a_test_of_my_own")
    typed_yaml.write_text(yaml.safe_dump({"version": 2, "models": list(edited.values())}, sort_keys=False))

    later = [*first, ("added", "string")]
    assert write_models(tmp_path, "orders", "shop.orders", later, ["id"], "dataworks_json") == ["added"]
    after = models()
    history_columns = [c["name"] for c in after["orders_history"]["columns"]]
    assert history_columns[:4] == ["id", "name", "added", "key_json"]
    assert after["orders_history"]["columns"][1] == edited["orders_history"]["columns"][1]
    assert after["orders_history"]["columns"][2]["description"] == "Source column `added` of shop.orders."
    assert "added" in [c["name"] for c in after["orders_current"]["columns"]]
    assert after["orders_current"]["data_tests"] == edited["orders_current"]["data_tests"]

    # nothing new: nothing changes
    text = typed_yaml.read_text()
    assert write_models(tmp_path, "orders", "shop.orders", later, ["id"], "dataworks_json") == []
    assert typed_yaml.read_text() == text


def test_scaffold_run_again_with_another_key_stops_naming_it(tmp_path: Path) -> None:
    """The configuration line is written once: run again with the key it holds (or none), the
    scaffold leaves it; with another key, it stops and says where the key is changed, rather
    than drop the key asked for."""
    project_file = tmp_path / "dbt_project.yml"
    project_file.write_text("vars:\n  cdc_typed_tables: {}\n")
    add_config_line(tmp_path, "orders", "shop.orders", ["id"])
    text = project_file.read_text()
    assert yaml.safe_load(text)["vars"]["cdc_typed_tables"] == {
        "orders": {"table_id": "shop.orders", "key_columns": ["id"]}
    }
    add_config_line(tmp_path, "orders", "shop.orders", ["id"])
    add_config_line(tmp_path, "orders", "shop.orders", None)
    assert project_file.read_text() == text
    with pytest.raises(
        SystemExit, match=r"--key-columns id,region: .* already configures orders \(key_columns: \['id'\]\)"
    ):
        add_config_line(tmp_path, "orders", "shop.orders", ["id", "region"])
    assert project_file.read_text() == text


def test_declared_and_wider_types(project) -> None:
    """The type rules the typed tables follow, as the project's macros compile them: a vendor
    type's Spark type (parameters, `unsigned`, case), and the type that holds two without loss."""
    declared = [
        ("canal_json", "DECIMAL(10, 2)"),
        ("canal_json", "decimal(70,2)"),
        ("canal_json", "int(10) unsigned"),
        ("canal_json", "bigint(20) unsigned zerofill"),
        ("canal_json", "geometry"),
        ("debezium_json", "org.apache.kafka.connect.data.Decimal(scale=3)"),
        ("debezium_json", "org.apache.kafka.connect.data.Decimal(scale=2,connect.decimal.precision=5)"),
        ("debezium_json", "io.debezium.data.VariableScaleDecimal"),
        ("debezium_json", "float"),
        ("cdl_json", "double"),
        ("cdl_json", "int16"),
        ("dataworks_json", "long"),
        ("datastream_json", "STRING"),
    ]
    wider = [
        ("int", "bigint"),
        ("bigint", "smallint"),
        ("decimal(5,2)", "decimal(12,2)"),
        ("decimal(5,2)", "decimal(4,3)"),
        ("int", "decimal(5,2)"),
        ("float", "double"),
        ("int", "float"),
        ("bigint", "double"),
        ("date", "timestamp_ntz"),
        ("bigint", "string"),
        ("decimal(38,0)", "decimal(38,1)"),
    ]
    calls = {
        "declared": ", ".join(f"cdc_declared_type('{f}', '{t}')" for f, t in declared),
        "wider": ", ".join(f"cdc_wider_type('{a}', '{b}')" for a, b in wider),
    }
    inline = "{{ tojson({" + ", ".join(f"'{name}': [{text}]" for name, text in calls.items()) + "}) }}"
    result = project.dbt("compile", "--inline", inline)
    compiled = json.loads(result.result.results[0].node.compiled_code)
    assert compiled["declared"] == [
        "decimal(10,2)",
        None,  # more digits than Spark's decimal holds: the values' type
        "bigint",
        "decimal(20,0)",
        None,  # not listed: the values' type
        "decimal(38,3)",
        "decimal(5,2)",
        "decimal(38,18)",
        "float",
        "double",
        "smallint",
        "bigint",
        None,  # Datastream declares no types
    ]
    assert compiled["wider"] == [
        "bigint",
        "bigint",
        "decimal(12,2)",
        "decimal(6,3)",
        "decimal(12,2)",
        "double",
        "double",
        None,  # bigint to double loses digits
        "timestamp_ntz",
        None,
        None,  # 39 digits
    ]
