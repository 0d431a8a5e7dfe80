"""DataWorks / DataHub JSON envelope, end to end: land -> dbt build -> read back."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cdc_testkit.dataworks_samples import EXPECTED_SAMPLE_HISTORY, history_summary, sample_messages
from cdc_testkit.encoders import dataworks_json
from cdc_testkit.harness import write_jsonl
from cdc_testkit.scenario import Change
from cdc_testkit.shared_rounds import Rounds, ScenarioView


def shuffled_samples() -> list[str]:
    messages = sample_messages()
    random.Random(7).shuffle(messages)
    return messages


def shuffled_parts(folder: Path) -> list[Path]:
    messages = shuffled_samples()
    return [write_jsonl(folder / f"part{part}.jsonl", messages[part::3]) for part in range(3)]


def samples_in_three_loads(folder: Path) -> Rounds:
    return [[("dataworks_json", part)] for part in shuffled_parts(folder)]


@pytest.mark.shared_rounds(scenario=samples_in_three_loads)
def test_document_samples_shuffled_in_several_loads(shared: ScenarioView, project, tmp_path: Path) -> None:
    """Every message twice in one load gives the exact history; shuffled arrival over three
    loads (each followed by a build: the shared project's rounds) gives the same."""
    messages, parts = shuffled_samples(), shuffled_parts(tmp_path)
    # every message twice (and the first file landed again) changes nothing: the reference
    doubled = project
    doubled.land("dataworks_json", write_jsonl(tmp_path / "twice.jsonl", messages + messages[::-1]))
    doubled.land("dataworks_json", parts[0], parts[0])
    doubled.build(tests=False)
    assert history_summary(doubled) == EXPECTED_SAMPLE_HISTORY
    assert doubled.current() == [
        (
            "myDatabase.mySchema.tableName",
            '{"rowid":"AAIUMPAAFAACxExAAE"}',
            '{"binData":"VGVzdCB0ZXh0MTIz","id":222,"name":"donald",'
            '"rowid":"AAIUMPAAFAACxExAAE","ts":"2020-05-24 10:14:30+00:00"}',
        ),
    ]
    assert doubled.query("select count(*) from {schema}.cdc_heartbeats") == [(2,)]
    assert doubled.query("select count(*) from {schema}.cdc_ddl_events") == [(1,)]

    assert shared.history() == doubled.history()
    assert shared.current() == doubled.current()
    # heartbeats and DDL went to their own tables, nothing was quarantined
    assert shared.query("select count(*) from {schema}.cdc_heartbeats") == [(2,)]
    assert shared.query("select table_id, vendor_op from {schema}.cdc_ddl_events") == [
        ("yunshi_db.t_shiyu_nopk", "ALTER")
    ]
    assert shared.query("select count(*) from {schema}.cdc_quarantine") == [(0,)]


DATABASE = "dw_shop"  # beside the other formats' scenarios (cdc_testkit.shared_rounds)


def change(kind: str, sequence: int, table: str = "orders", before=None, after=None, **extra) -> Change:
    return Change(kind, DATABASE, table, sequence, 1_600_000_000_000 + sequence * 1000, ("id",), before, after, **extra)


def semantics_messages() -> tuple[list[dict | str], dict]:
    """The messages of every rule, and the bad ones by what is wrong with them."""
    row = {"id": 1, "note": "a"}
    messages: list[dict | str] = []
    # sequence ids compared as numbers: 9 < 10 < 100 (as strings "9" > "10")
    for sequence, note in ((100, "third"), (9, "first"), (10, "second")):
        kind = "insert" if sequence == 9 else "update"
        messages += dataworks_json(change(kind, sequence, "numeric", before=row, after={"id": 1, "note": note}))
    # the two update modes give the same result
    for table, one_record in (("two_messages", False), ("one_message", True)):
        messages += dataworks_json(change("insert", 1, table, after={"id": 1, "note": "v1"}))
        messages += dataworks_json(
            change("update", 2, table, before={"id": 1, "note": "v1"}, after={"id": 1, "note": "v2"}),
            one_record_updates=one_record,
        )
    # delete then re-insert: a new version after a deleted period
    messages += dataworks_json(change("insert", 1, "reinsert", after={"id": 5, "note": "old"}))
    messages += dataworks_json(change("delete", 2, "reinsert", before={"id": 5, "note": "old"}))
    messages += dataworks_json(change("insert", 3, "reinsert", after={"id": 5, "note": "new"}))
    # an update that changes the key ends the old key and opens the new one
    messages += dataworks_json(change("insert", 1, "rekey", after={"id": 1, "note": "x"}))
    messages += dataworks_json(
        change("update", 2, "rekey", before={"id": 1, "note": "x"}, after={"id": 2, "note": "x"})
    )
    # a truncate ends every live version of its table (and is logged as DDL); later inserts live
    for key in (1, 2, 3):
        messages += dataworks_json(change("insert", key, "trunc", after={"id": key, "note": "before"}))
    messages += dataworks_json(change("truncate", 10, "trunc"))
    messages += dataworks_json(change("insert", 11, "trunc", after={"id": 3, "note": "after"}))
    # transaction markers are counted, not row changes
    messages += dataworks_json(change("begin", 20, "orders"))
    messages += dataworks_json(change("commit", 21, "orders"))
    # the key is canonical whatever the column order of primaryKey values in the image
    canonical = dataworks_json(change("insert", 1, "canon", after={"b": 2, "a": 1, "id": 9}))[0]
    canonical["schema"]["primaryKey"] = ["id", "a"]
    messages.append(canonical)
    reordered = dataworks_json(change("update", 2, "canon", after={"id": 9, "a": 1, "b": 3}), one_record_updates=True)[
        0
    ]
    reordered["schema"]["primaryKey"] = ["id", "a"]
    messages.append(reordered)
    # messages that cannot be understood are quarantined with a reason
    bad = {
        "not json": '{"schema": {',
        "no op": {"payload": {"sequenceId": "1"}},
        "unknown op": dataworks_json(change("insert", 1, "bad", after={"id": 1}))[0]
        | {"payload": {"op": "UPSERT", "sequenceId": "1", "after": {"dataColumn": {"id": 1}}}},
        "no table": {
            "schema": {"primaryKey": ["id"]},
            "payload": {"op": "INSERT", "sequenceId": "1", "after": {"dataColumn": {"id": 1}}},
        },
        "no sequence": {
            "schema": {"primaryKey": ["id"], "source": {"dbName": "d", "tableName": "t"}},
            "payload": {"op": "INSERT", "after": {"dataColumn": {"id": 1}}},
        },
        "key absent": {
            "schema": {"primaryKey": ["id"], "source": {"dbName": "d", "tableName": "t"}},
            "payload": {
                "op": "INSERT",
                "sequenceId": "5",
                "timestamp": {"eventTime": 1600000000000},
                "after": {"dataColumn": {"other": 1}},
            },
        },
        "no commit time": {
            "schema": {"primaryKey": ["id"], "source": {"dbName": "d", "tableName": "t"}},
            "payload": {"op": "INSERT", "sequenceId": "6", "after": {"dataColumn": {"id": 1}}},
        },
    }
    messages += list(bad.values())
    return messages, bad


def typed_message() -> dict:
    """DATE is a timestamp, BYTES binary, LONG/DOUBLE/BOOLEAN keep their JSON type."""
    typed = dataworks_json(
        change(
            "insert",
            1,
            "typed",
            after={"id": 1, "amount": 1.5, "active": True, "updated": 1_600_000_000_123, "blob": "aGVsbG8="},
        )
    )[0]
    typed["schema"]["dataColumn"] = [
        {"name": "id", "type": "LONG"},
        {"name": "amount", "type": "DOUBLE"},
        {"name": "active", "type": "BOOLEAN"},
        {"name": "updated", "type": "DATE"},
        {"name": "blob", "type": "BYTES"},
    ]
    return typed


def semantics_then_typed(folder: Path) -> Rounds:
    return [
        [("dataworks_json", write_jsonl(folder / "semantics.jsonl", semantics_messages()[0]))],
        [("dataworks_json", write_jsonl(folder / "typed.jsonl", [typed_message()]))],
    ]


@pytest.mark.shared_rounds(scenario=semantics_then_typed)
def test_semantics(shared: ScenarioView) -> None:
    """Ordering, update modes, key changes, truncates, typed values, quarantine."""
    messages, bad = semantics_messages()

    def rows(table: str) -> list[tuple]:
        return [
            (key, version, deleted, current, json.loads(image))
            for _t, key, version, _f, _to, current, deleted, _op, image, _s, _e in shared.history(after_round=0)
            if _t == f"{DATABASE}.{table}"
        ]

    assert [r[4]["note"] for r in rows("numeric")] == ["first", "second", "third"]
    assert [r[1:] for r in rows("two_messages")] == [r[1:] for r in rows("one_message")]
    assert [(r[2], r[4]["note"]) for r in rows("reinsert")] == [(False, "old"), (True, "old"), (False, "new")]
    assert [(r[0], r[2], r[3]) for r in rows("rekey")] == [
        ('{"id":1}', False, False),
        ('{"id":1}', True, True),
        ('{"id":2}', False, True),
    ]
    assert shared.query(
        "select key_json, to_json(row_image) from {schema}.cdc_current where table_id = 'dw_shop.trunc'"
    ) == [('{"id":3}', '{"id":3,"note":"after"}')]
    assert shared.query(
        "select count(*) from {schema}.cdc_history where table_id = 'dw_shop.trunc' and is_deleted"
    ) == [(3,)]
    assert shared.query("select is_truncate from {schema}.cdc_ddl_events where table_id = 'dw_shop.trunc'") == [(True,)]
    assert [r[0] for r in rows("canon")] == ['{"id":9,"a":1}', '{"id":9,"a":1}']
    reasons = sorted(r[0] for r in shared.query("select quarantine_reason from {schema}.cdc_quarantine"))
    assert reasons == sorted(
        [
            "not valid JSON",
            "no operation in the message",
            'unknown operation {"op":"UPSERT"}',
            "no table in the message",
            "no sequence in the message",
            "no commit time in the message",
            'key column absent from the row image: ["id"]',
        ]
    )
    ledger = shared.query(
        "select sum(messages_landed), sum(transaction_messages), sum(quarantined_messages) "
        "from {schema}.cdc_load_batches"
    )
    assert ledger == [(len(messages) + 1, 2, len(bad))]  # and the typed message of the second round
    # typed values (typed_message)
    assert shared.query(
        "select schema_of_variant(row_image), cast(variant_get(row_image, '$.blob', 'binary') as string), "
        "variant_get(row_image, '$.updated', 'timestamp') from {schema}.cdc_current where table_id = 'dw_shop.typed'"
    ) == [
        (
            "OBJECT<active: BOOLEAN, amount: DOUBLE, blob: BINARY, id: BIGINT, updated: TIMESTAMP>",
            "hello",
            __import__("datetime").datetime(2020, 9, 13, 12, 26, 40, 123000),
        )
    ]
