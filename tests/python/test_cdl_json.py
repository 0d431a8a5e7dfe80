"""Huawei CDL JSON (message_version 1.0), end to end: land -> dbt build -> read back."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest

from cdc_testkit.encoders import cdl_json
from cdc_testkit.harness import PROJECT_ROOT, write_jsonl
from cdc_testkit.scenario import Change
from cdc_testkit.shared_rounds import Rounds, ScenarioView

SAMPLES = PROJECT_ROOT / "sample_data" / "cdl_json"
T0 = 1_700_000_000_000


def change(kind: str, sequence: int, before=None, after=None) -> Change:
    return Change(kind, "cdl_shop", "orders", sequence, T0 + sequence * 1000, ("id",), before, after)


def ts(sequence: int) -> dt.datetime:
    return dt.datetime(2023, 11, 14, 22, 13, 20) + dt.timedelta(seconds=sequence)


def seq(sequence: int, op: int) -> str:
    return f"{sequence:020d}.{T0 + sequence * 1000:020d}.{op}"


def shuffled_messages() -> tuple[list[str], str]:
    """The messages shuffled, and the heartbeat's."""
    a1, a2, a3 = {"id": 1, "note": "a"}, {"id": 1, "note": "b"}, {"id": 1, "note": "c"}
    b1, b2 = {"id": 2, "note": "x"}, {"id": 2, "note": "z"}
    changes = [
        change("insert", 10, after=a1),
        change("insert", 11, after=b1),
        change("update", 12, before=a1, after=a2),
        change("heartbeat", 13),
        change("delete", 14, before=b1),
        change("update", 15, before=a2, after=a3),
        change("insert", 16, after=b2),
    ]
    messages = [json.dumps(m) for c in changes for m in cdl_json(c)]
    messages += [line.strip() for line in (SAMPLES / "doc003_cdl_json_insert.jsonl").open() if line.strip()]
    rng = random.Random(3)
    rng.shuffle(messages)
    return messages, json.dumps(cdl_json(changes[3])[0])


def two_loads(folder: Path) -> Rounds:
    messages, heartbeat = shuffled_messages()
    first = messages[:4]
    second = messages[4:] + [m for m in first if m != heartbeat][:2]  # the second load repeats two messages
    load1 = write_jsonl(folder / "load1.jsonl", first)
    return [[("cdl_json", load1)], [("cdl_json", write_jsonl(folder / "load2.jsonl", second)), ("cdl_json", load1)]]


@pytest.mark.shared_rounds(scenario=two_loads)
def test_stream_shuffled_in_two_loads(shared: ScenarioView) -> None:
    """Insert, updates, delete, re-insert, heartbeat, duplicates, shuffled, two loads: exact history."""
    messages, _heartbeat = shuffled_messages()
    assert shared.landed[1][1]["messages"] == 0  # re-landing a file lands nothing

    assert shared.current() == [
        ("cdl_shop.orders", '{"id":1}', '{"id":1,"note":"c"}'),
        ("cdl_shop.orders", '{"id":2}', '{"id":2,"note":"z"}'),
        ("public.ct_pg2hudi", '{"id":34}', '{"count1":13,"decimalNum":null,"id":34,"time1":null}'),
    ]
    doc_ts = dt.datetime(2024, 2, 4, 11, 59, 56, 13000)
    assert shared.history() == [
        (
            "cdl_shop.orders",
            '{"id":1}',
            1,
            ts(10),
            ts(12),
            False,
            False,
            "insert",
            '{"id":1,"note":"a"}',
            seq(10, 1),
            seq(12, 2),
        ),
        (
            "cdl_shop.orders",
            '{"id":1}',
            2,
            ts(12),
            ts(15),
            False,
            False,
            "update",
            '{"id":1,"note":"b"}',
            seq(12, 2),
            seq(15, 2),
        ),
        (
            "cdl_shop.orders",
            '{"id":1}',
            3,
            ts(15),
            None,
            True,
            False,
            "update",
            '{"id":1,"note":"c"}',
            seq(15, 2),
            None,
        ),
        (
            "cdl_shop.orders",
            '{"id":2}',
            1,
            ts(11),
            ts(14),
            False,
            False,
            "insert",
            '{"id":2,"note":"x"}',
            seq(11, 1),
            seq(14, 3),
        ),
        (
            "cdl_shop.orders",
            '{"id":2}',
            2,
            ts(14),
            ts(16),
            False,
            True,
            "delete",
            '{"id":2,"note":"x"}',
            seq(14, 3),
            seq(16, 1),
        ),
        (
            "cdl_shop.orders",
            '{"id":2}',
            3,
            ts(16),
            None,
            True,
            False,
            "insert",
            '{"id":2,"note":"z"}',
            seq(16, 1),
            None,
        ),
        (
            "public.ct_pg2hudi",
            '{"id":34}',
            1,
            doc_ts,
            None,
            True,
            False,
            "insert",
            '{"count1":13,"decimalNum":null,"id":34,"time1":null}',
            "00000000163955221008.00000001707047996013.1",
            None,
        ),
    ]
    # the heartbeat (message_type "1") is a heartbeat; data messages carrying HEARTBEAT_IDENTIFIER are not
    assert shared.query("select count(*) from {schema}.cdc_heartbeats") == [(1,)]
    assert shared.query("select count(*) from {schema}.cdc_quarantine") == [(0,)]
    assert shared.query(
        "select sum(messages_landed), sum(heartbeat_messages), sum(row_change_messages) from {schema}.cdc_load_batches"
    ) == [(len(messages) + 2, 1, len(messages) - 1 + 2)]
