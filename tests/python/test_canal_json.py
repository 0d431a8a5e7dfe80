"""Alibaba DTS Canal JSON, end to end: land -> dbt build -> read back."""

from __future__ import annotations

import json
import random
from functools import partial
from pathlib import Path

import pytest

from cdc_testkit.encoders import canal_json
from cdc_testkit.harness import THIRDPARTY, write_jsonl
from cdc_testkit.scenario import Change
from cdc_testkit.shared_rounds import Rounds, ScenarioView

PAIMON = THIRDPARTY / "canal_json" / "paimon_table_schemaevolution"
T0 = 1_600_000_000_000


def change(kind: str, sequence: int, before=None, after=None, database: str = "shop", **extra) -> Change:
    # several changes share one binlog second (es): `id` orders them
    return Change(kind, database, "orders", sequence, T0 + (sequence // 3) * 1000, ("id",), before, after, **extra)


def stream() -> list[dict]:
    """insert, multi-row insert, updates (partial old), DDL, delete, re-insert, key change."""
    messages: list[dict] = []
    messages += canal_json(change("insert", 1, after={"id": 1, "note": "a", "amount": 1.5}))
    multi = canal_json(change("insert", 2, after={"id": 2, "note": "b", "amount": 2.0}))[0]
    multi["data"].append({"id": "3", "note": "c", "amount": "3.25"})  # two rows, one message
    messages.append(multi)
    messages += canal_json(
        change("update", 3, before={"id": 1, "note": "a", "amount": 1.5}, after={"id": 1, "note": "a2", "amount": 1.5})
    )
    messages += canal_json(change("ddl", 4, ddl="ALTER TABLE orders ADD COLUMN flag INT"))
    messages += canal_json(
        change(
            "update",
            5,
            before={"id": 1, "note": "a2", "amount": 1.5},
            after={"id": 1, "note": "a3", "amount": 1.5, "flag": 7},
        )
    )
    messages += canal_json(change("delete", 6, before={"id": 2, "note": "b", "amount": 2.0}))
    messages += canal_json(change("insert", 7, after={"id": 2, "note": "b again", "amount": 4.0}))
    messages += canal_json(
        change(
            "update", 8, before={"id": 3, "note": "c", "amount": 3.25}, after={"id": 30, "note": "c", "amount": 3.25}
        )
    )
    return messages


def at(sequence: int) -> str:
    return str(T0 + (sequence // 3) * 1000).zfill(20) + str(sequence).zfill(20)


def shuffled_duplicated(folder: Path) -> Rounds:
    messages = stream()
    texts = [json.dumps(message) for message in messages]
    texts += texts[::3]  # duplicates
    random.Random(11).shuffle(texts)
    half = len(texts) // 2
    return [
        [("canal_json", write_jsonl(folder / f"part{part}.jsonl", chunk))]
        for part, chunk in enumerate((texts[:half], texts[half:]))
    ]


@pytest.mark.shared_rounds(scenario=shuffled_duplicated)
def test_stream_shuffled_duplicated_in_two_loads(shared: ScenarioView) -> None:
    assert shared.current() == [
        ("shop.orders", '{"id":1}', '{"amount":1.5,"flag":"7","id":1,"note":"a3"}'),
        ("shop.orders", '{"id":2}', '{"amount":4.0,"id":2,"note":"b again"}'),
        ("shop.orders", '{"id":30}', '{"amount":3.25,"id":30,"note":"c"}'),
    ]
    history = [(k, v, cur, dele, op, row, s, e) for _t, k, v, _f, _to, cur, dele, op, row, s, e in shared.history()]
    p0 = "0" * 10
    p1 = "0" * 9 + "1"
    # key_json sorts as text: '{"id":30}' before '{"id":3}'
    assert history == [
        ('{"id":1}', 1, False, False, "insert", '{"amount":1.5,"id":1,"note":"a"}', at(1) + p0, at(3) + p0),
        ('{"id":1}', 2, False, False, "update", '{"amount":1.5,"id":1,"note":"a2"}', at(3) + p0, at(5) + p0),
        ('{"id":1}', 3, True, False, "update", '{"amount":1.5,"flag":"7","id":1,"note":"a3"}', at(5) + p0, None),
        ('{"id":2}', 1, False, False, "insert", '{"amount":2.0,"id":2,"note":"b"}', at(2) + p0, at(6) + p0),
        ('{"id":2}', 2, False, True, "delete", '{"amount":2.0,"id":2,"note":"b"}', at(6) + p0, at(7) + p0),
        ('{"id":2}', 3, True, False, "insert", '{"amount":4.0,"id":2,"note":"b again"}', at(7) + p0, None),
        ('{"id":30}', 1, True, False, "insert", '{"amount":3.25,"id":30,"note":"c"}', at(8) + p0, None),
        ('{"id":3}', 1, False, False, "insert", '{"amount":3.25,"id":3,"note":"c"}', at(2) + p1, at(8) + p0),
        ('{"id":3}', 2, True, True, "delete", '{"amount":3.25,"id":3,"note":"c"}', at(8) + p0, None),
    ]
    assert shared.query("select table_id, vendor_op, ddl_text from {schema}.cdc_ddl_events") == [
        ("shop.orders", "ALTER", "ALTER TABLE orders ADD COLUMN flag INT")
    ]
    assert shared.query("select count(*) from {schema}.cdc_quarantine") == [(0,)]


def paimon_current(current: list[tuple]) -> list[tuple]:
    """The Paimon tables' rows of current() as (table, pt, _id, v1...v5)."""
    rows = [(table, text) for table, _key, text in current if table.startswith("paimon_sync_table.")]
    return sorted(
        (
            table,
            *(
                image.get(column)
                if column != "v4" or image.get(column) is None
                else list(__import__("base64").b64decode(image[column]))
                for image in [json.loads(text)]
                for column in ("pt", "_id", "v1", "v2", "v3", "v4", "v5")
            ),
        )
        for table, text in rows
    )


def paimon_captures_and_legacy_layout(folder: Path) -> Rounds:
    """The Paimon captures 1 to 3 with the legacy source's messages, then captures 5 and 4 (out of order)."""
    legacy = [
        # legacy layout: INSERT row in old, UPDATE old = after / data = before, DELETE row in old
        {"old": [{"id": "1", "v": "one"}], "data": None, "database": "legacydb", "table": "t", "es": 1000,
         "id": 1, "isDdl": False, "mysqlType": {"id": "int", "v": "varchar(5)"}, "pkNames": ["id"],
         "sql": "", "ts": 1001, "type": "INSERT"},
        {"old": [{"id": "2", "v": "two"}], "data": None, "database": "legacydb", "table": "t", "es": 1000,
         "id": 2, "isDdl": False, "mysqlType": {"id": "int", "v": "varchar(5)"}, "pkNames": ["id"],
         "sql": "", "ts": 1001, "type": "INSERT"},
        {"old": [{"id": "1", "v": "uno"}], "data": [{"id": "1", "v": "one"}], "database": "legacydb",
         "table": "t", "es": 2000, "id": 3, "isDdl": False, "mysqlType": {"id": "int", "v": "varchar(5)"},
         "pkNames": ["id"], "sql": "", "ts": 2001, "type": "UPDATE"},
        {"old": [{"id": "2", "v": "two"}], "data": None, "database": "legacydb", "table": "t", "es": 3000,
         "id": 4, "isDdl": False, "mysqlType": {"id": "int", "v": "varchar(5)"}, "pkNames": ["id"],
         "sql": "", "ts": 3001, "type": "DELETE"},
    ]  # fmt: skip
    return [
        [
            ("canal_json", *(PAIMON / f"canal-data-{n}.txt" for n in (1, 2, 3))),
            ("canal_json", write_jsonl(folder / "legacy.jsonl", legacy)),
        ],
        [("canal_json", *(PAIMON / f"canal-data-{n}.txt" for n in (5, 4)))],
    ]


# a source configured as legacy (a pre-2022-03-20 Canal instance): its data and old are swapped
@pytest.mark.shared_rounds(
    scenario=paimon_captures_and_legacy_layout, vars={"cdc_canal_json_legacy_sources": ["legacydb"]}
)
def test_paimon_captures_and_legacy_layout(shared: ScenarioView) -> None:
    """The Apache Paimon canal captures (5 batches) give the state its IT expects; a source
    configured as legacy (pre-2022-03-20 instance) reads data/old swapped."""
    # after canal-data-3.txt (KafkaCanalSyncTableActionITCase): the two source tables together
    assert sorted(row[1:5] for row in paimon_current(shared.current(after_round=0))) == sorted(
        [(1, 1, "one", None), (1, 2, "second", None), (2, 3, "three", 30000000000), (2, 4, "four", None),
         (1, 6, "six", 60), (2, 7, "seven", 70000000000), (2, 8, "eight", 80000000000)]
    )  # fmt: skip
    none = (None, None, None)
    assert sorted(row[1:] for row in paimon_current(shared.current())) == sorted(
        [
            (1, 1, "one", None, *none),
            (1, 2, "second", None, *none),
            (2, 3, "three", 30000000000, *none),
            (2, 4, "four", None, None, list(b"four.bin.long"), 4.00000000004),
            (1, 6, "six", 60, *none),
            (2, 7, "seven", 70000000000, *none),
            (2, 8, "very long string", 80000000000, *none),
            (1, 9, "nine", 90000000000, 99999.999, list(b"nine.bin.long"), 9.00000000009),
        ]
    )
    # rows of the merged tables keep their own source table
    assert sorted({row[0] for row in paimon_current(shared.current())}) == [
        "paimon_sync_table.schema_evolution_1",
        "paimon_sync_table.schema_evolution_2",
    ]
    assert shared.query(
        "select key_json, to_json(row_image) from {schema}.cdc_current where table_id = 'legacydb.t'"
    ) == [('{"id":1}', '{"id":1,"v":"uno"}')]
    assert shared.query("select count(*) from {schema}.cdc_history where table_id = 'legacydb.t' and is_deleted") == [
        (1,)
    ]
    # 16 ALTER messages; nothing quarantined but the licence comment blocks (17 lines in each of 5 files)
    assert shared.query("select count(*) from {schema}.cdc_ddl_events where table_id like 'paimon_sync_table.%'") == [
        (16,)
    ]
    reasons = shared.query("select quarantine_reason, count(*) from {schema}.cdc_quarantine group by 1")
    assert reasons == [("not valid JSON", 5 * 17)]


TIE_DATABASE = "canal_tie"  # beside the other scenario's shop.orders (cdc_testkit.shared_rounds)


def batch_sent_twice(folder: Path) -> Rounds:
    texts = batch()
    return [
        [("canal_json", write_jsonl(folder / "batch.jsonl", texts))],
        [("canal_json", write_jsonl(folder / "resent.jsonl", texts[2:]))],  # the batch sent again
    ]


def batch() -> list[str]:
    tied = partial(change, database=TIE_DATABASE)
    first = {"id": 5, "note": "a", "amount": 1.0}
    second = {"id": 6, "note": "b", "amount": 2.0}
    messages = [
        *canal_json(tied("insert", 10, after=first)),
        *canal_json(tied("insert", 10, after=second)),
        # one batch (id 20): key 5 updated then deleted; key 6 deleted then inserted again
        *canal_json(tied("update", 20, before=first, after={**first, "note": "a2"})),
        *canal_json(tied("delete", 20, before={**first, "note": "a2"})),
        *canal_json(tied("delete", 20, before=second)),
        *canal_json(tied("insert", 20, after={**second, "note": "b2"})),
    ]
    return [json.dumps(message) for message in messages]


@pytest.mark.shared_rounds(scenario=batch_sent_twice)
def test_changes_sharing_a_position_stay_apart(shared: ScenarioView) -> None:
    """Open-source Canal gives every flat message of one batch the batch's `id`, and `es` has
    whole seconds: an UPDATE then a DELETE of one key in one batch share (es, id). They are two
    changes, in the order they arrived; a copy of them landed again changes nothing."""
    assert shared.current() == [(f"{TIE_DATABASE}.orders", '{"id":6}', '{"amount":2.0,"id":6,"note":"b2"}')]
    tie = " 000002"
    history = [(k, v, cur, dele, op, s, e) for _t, k, v, _f, _to, cur, dele, op, _row, s, e in shared.history()]
    p0 = "0" * 10
    assert history == [
        ('{"id":5}', 1, False, False, "insert", at(10) + p0, at(20) + p0),
        ('{"id":5}', 2, False, False, "update", at(20) + p0, at(20) + p0 + tie),
        ('{"id":5}', 3, True, True, "delete", at(20) + p0 + tie, None),
        ('{"id":6}', 1, False, False, "insert", at(10) + p0, at(20) + p0),
        ('{"id":6}', 2, False, True, "delete", at(20) + p0, at(20) + p0 + tie),
        ('{"id":6}', 3, True, False, "insert", at(20) + p0 + tie, None),
    ]
    assert shared.query("select count(*) from {schema}.cdc_events") == [(6,)]
