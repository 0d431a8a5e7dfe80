"""Debezium JSON (plain and CDL message_version 2.0), end to end: land -> dbt build -> read back."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest

from cdc_testkit.encoders import debezium_json
from cdc_testkit.harness import PROJECT_ROOT, THIRDPARTY, write_jsonl
from cdc_testkit.scenario import Change
from cdc_testkit.shared_rounds import Rounds, ScenarioView

SAMPLES = PROJECT_ROOT / "sample_data" / "debezium_json"
THIRD_PARTY = THIRDPARTY / "debezium_json"
SERDE = THIRD_PARTY / "debezium_serde"
PAIMON = THIRD_PARTY / "paimon_table_schemaevolution"
T0 = 1_700_000_000_000


def change(kind: str, sequence: int, table: str = "orders", before=None, after=None) -> Change:
    return Change(kind, "public", table, sequence, T0 + sequence * 1000, ("id",), before, after)


def ts(sequence: int) -> dt.datetime:
    return dt.datetime(2023, 11, 14, 22, 13, 20) + dt.timedelta(seconds=sequence)


def seq(sequence: int, op: int) -> str:
    return f"{sequence:020d}.{T0 + sequence * 1000:020d}.{op}"


def shuffled_messages() -> list[str]:
    a1, a2 = {"id": 1, "note": "a", "big": "long text"}, {"id": 1, "note": "b", "big": "long text"}
    b1, b2 = {"id": 2, "note": "x", "big": None}, {"id": 2, "note": "z", "big": None}
    changes = [
        change("begin", 9),
        change("insert", 10, after=a1),
        change("insert", 11, after=b1),
        change("commit", 12),
        change("update", 13, before=a1, after=a2),
        change("heartbeat", 14),
        change("delete", 15, before=b1),
        change("insert", 16, after=b2),
        change("insert", 20, table="gone", after={"id": 5, "note": "t"}),
        change("truncate", 21, table="gone"),
        change("insert", 22, table="gone", after={"id": 6, "note": "after"}),
    ]
    messages = [json.dumps(m) for i, c in enumerate(changes) for m in debezium_json(c, with_schema=i % 2 == 0)]
    # PostgreSQL did not send the unchanged TOASTed column: the previous value is kept
    toast = debezium_json(change("update", 17, before=None, after={"id": 1, "note": "c", "big": "x"}), False)[0]
    toast["after"]["big"] = "__debezium_unavailable_value"
    messages.append(json.dumps(toast))
    # a column dropped upstream (`old`), then a TOAST update whose schema no longer declares it:
    # the previous `big` is kept, `old` is not carried over
    wide = {"id": 7, "note": "n", "old": "o", "big": "long"}
    messages.append(json.dumps(debezium_json(change("insert", 30, table="dropped", after=wide))[0]))
    narrowed = debezium_json(
        change("update", 31, table="dropped", before=None, after={"id": 7, "note": "m", "big": "y"})
    )
    narrowed[0]["payload"]["after"]["big"] = "__debezium_unavailable_value"
    messages.append(json.dumps(narrowed[0]))
    messages += [line.strip() for line in (SAMPLES / "doc003_debezium_json_insert.jsonl").open() if line.strip()]
    random.Random(5).shuffle(messages)
    return messages


def two_loads(folder: Path) -> Rounds:
    messages = shuffled_messages()
    first = messages[:6]
    second = messages[6:] + [m for m in first if '"op"' in m][:2]  # duplicates in the second load
    return [
        [("debezium_json", write_jsonl(folder / "load1.jsonl", first))],
        [
            ("debezium_json", write_jsonl(folder / "load2.jsonl", second)),
            # a schema-drifted update (extra column) of Debezium's own serde fixtures
            ("debezium_json", SERDE / "serde-unknown-property.json"),
        ],
    ]


@pytest.mark.shared_rounds(scenario=two_loads)
def test_stream_shuffled_in_two_loads(shared: ScenarioView) -> None:
    """c/u/d/re-insert, truncate, TOAST placeholder, tombstones, heartbeat, transaction markers."""
    messages = shuffled_messages()

    assert shared.current() == [
        ("cdl.public.ct_pg2hudi", '{"id":35}', '{"count1":14,"decimalNum":null,"id":35,"time1":null}'),
        (
            "inventory.customers",
            '{"id":1004}',
            '{"email":"annek@noanswer.org","first_name":"Anne","id":1004,"last_name":"Kretchmar","middle_name":"L"}',
        ),
        ("pg.public.dropped", '{"id":7}', '{"big":"long","id":7,"note":"m"}'),
        ("pg.public.gone", '{"id":6}', '{"id":6,"note":"after"}'),
        ("pg.public.orders", '{"id":1}', '{"big":"long text","id":1,"note":"c"}'),
        ("pg.public.orders", '{"id":2}', '{"big":null,"id":2,"note":"z"}'),
    ]
    orders = [row for row in shared.history() if row[0] == "pg.public.orders"]
    assert orders == [
        ("pg.public.orders", '{"id":1}', 1, ts(10), ts(13), False, False, "insert",
         '{"big":"long text","id":1,"note":"a"}', seq(10, 1), seq(13, 2)),
        ("pg.public.orders", '{"id":1}', 2, ts(13), ts(17), False, False, "update",
         '{"big":"long text","id":1,"note":"b"}', seq(13, 2), seq(17, 2)),
        ("pg.public.orders", '{"id":1}', 3, ts(17), None, True, False, "update",
         '{"big":"long text","id":1,"note":"c"}', seq(17, 2), None),
        ("pg.public.orders", '{"id":2}', 1, ts(11), ts(15), False, False, "insert",
         '{"big":null,"id":2,"note":"x"}', seq(11, 1), seq(15, 3)),
        ("pg.public.orders", '{"id":2}', 2, ts(15), ts(16), False, True, "delete",
         '{"big":null,"id":2,"note":"x"}', seq(15, 3), seq(16, 1)),
        ("pg.public.orders", '{"id":2}', 3, ts(16), None, True, False, "insert",
         '{"big":null,"id":2,"note":"z"}', seq(16, 1), None),
    ]  # fmt: skip
    gone = [(r[1], r[2], r[5], r[6], r[7]) for r in shared.history() if r[0] == "pg.public.gone"]
    assert gone == [('{"id":5}', 1, False, False, "insert"), ('{"id":5}', 2, True, True, "truncate"),
                    ('{"id":6}', 1, True, False, "insert")]  # fmt: skip
    assert shared.query("select table_id, is_truncate from {schema}.cdc_ddl_events") == [("pg.public.gone", True)]
    assert shared.query("select count(*) from {schema}.cdc_heartbeats") == [(1,)]
    assert shared.query("select count(*) from {schema}.cdc_quarantine") == [(0,)]
    # the tombstone after the delete and the BEGIN/END markers are counted, not row changes
    landed = len(messages) + 2 + 1
    assert shared.query(
        "select sum(messages_landed), sum(transaction_messages), sum(heartbeat_messages), sum(ddl_messages) "
        "from {schema}.cdc_load_batches"
    ) == [(landed, 3, 1, 1)]


def test_third_party_fixtures(project) -> None:
    """Debezium's serde fixtures, Paimon's schema-evolution batches and Flink's schema-exclude stream."""
    project.land("debezium_json", SERDE / "serde-with-schema.json", SERDE / "serde-without-schema.json")
    project.land("debezium_json", PAIMON / "debezium-data-1.txt", PAIMON / "debezium-data-2.txt")
    project.build(tests=False)
    # SerdeTest: after == (1004, Anne, Kretchmar, annek@noanswer.org), op c; with and without schema: one row
    assert project.query(
        "select op, to_json(after_image) from {schema}.cdc_events where table_id = 'inventory.customers'"
    ) == [("insert", '{"email":"annek@noanswer.org","first_name":"Anne","id":1004,"last_name":"Kretchmar"}')]
    paimon = (
        "select key_json, to_json(row_image) from {schema}.cdc_current where table_id = 'test.product' "
        "order by variant_get(row_image, '$.id', 'int')"
    )
    assert [json.loads(row)["id"] for _k, row in project.query(paimon)] == [101, 102, 103, 104]

    project.land("debezium_json", SERDE / "serde-update.json")
    project.land("debezium_json", PAIMON / "debezium-data-3.txt", THIRD_PARTY / "debezium-data-schema-exclude.txt")
    project.build()
    # SerdeTest valueBeforeField: before == (1004, Anne-Marie, Kretchmar, annek@noanswer.org)
    assert project.query(
        "select op, to_json(before_image), to_json(after_image) from {schema}.cdc_events "
        "where table_id = 'inventory.customers' and op = 'update'"
    ) == [
        (
            "update",
            '{"email":"annek@noanswer.org","first_name":"Anne-Marie","id":1004,"last_name":"Kretchmar"}',
            '{"email":"annek@noanswer.org","first_name":"Anne","id":1004,"last_name":"Kretchmar"}',
        )
    ]
    # KafkaSyncTableActionITCase after debezium-data-3: 101 deleted, 105 updated to Beijing, 107 added
    current = {json.loads(row)["id"]: json.loads(row) for _k, row in project.query(paimon)}
    assert sorted(current) == [102, 103, 104, 105, 107]
    assert current[105] == {
        "id": 105,
        "name": "hammer",
        "description": "14oz carpenter's hammer",
        "weight": 0.875,
        "address": "Beijing",
    }
    assert current[103]["age"] == 18 and "age" not in current[107]
    # DebeziumJsonSerDeSchemaTest (schema exclude): final state of inventory.products; weight is a FLOAT column
    # there (the messages carry float32 values widened, 22.200000762939453), so compare at float32 precision
    products = project.query(
        "select to_json(row_image) from {schema}.cdc_current where table_id = 'inventory.products' order by key_json"
    )
    final = [
        (r["id"], r["name"], r["description"], round(r["weight"], 5)) for r in map(json.loads, (p[0] for p in products))
    ]
    assert final == [
        (101, "scooter", "Small 2-wheel scooter", 3.14),
        (102, "car battery", "12V car battery", 8.1),
        (103, "12-pack drill bits", "12-pack of drill bits with sizes ranging from #40 to #3", 0.8),
        (104, "hammer", "12oz carpenter's hammer", 0.75),
        (105, "hammer", "14oz carpenter's hammer", 0.875),
        (106, "hammer", "18oz carpenter hammer", 1.0),
        (107, "rocks", "box of assorted rocks", 5.1),
        (108, "jacket", "water resistent black wind breaker", 0.1),
        (109, "spare tire", "24 inch spare tire", 22.2),
        (110, "jacket", "new water resistent white wind breaker", 0.5),
    ]
    # 111 was inserted, updated and deleted: three versions, the last one deleted
    assert project.query(
        "select count(*), max_by(is_deleted, version_number) from {schema}.cdc_history "
        "where table_id = 'inventory.products' and key_json = '{{\"id\":111}}'"
    ) == [(3, True)]
    # Paimon's files start with a licence comment block: landed line by line and quarantined, never dropped
    licence_lines = sum(
        1
        for path in PAIMON.glob("debezium-data-*.txt")
        if not path.name.endswith(".expected.txt")
        for line in path.open()
        if line.strip() and not line.startswith("{")
    )
    assert project.query("select quarantine_reason, count(*) from {schema}.cdc_quarantine group by 1") == [
        ("not valid JSON", licence_lines)
    ]
