"""DataHub TUPLE topic rows, end to end: land -> dbt build -> read back."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cdc_testkit.encoders import datahub_tuple
from cdc_testkit.harness import write_jsonl
from cdc_testkit.scenario import Change
from cdc_testkit.shared_rounds import Rounds, ScenarioView

T0 = 1_650_000_000_000


def change(kind: str, sequence: int, before=None, after=None, table: str = "orders") -> Change:
    return Change(kind, "tuple_shop", table, sequence, T0 + sequence * 1000, ("id",), before, after)


def at(sequence: int) -> datetime:
    return datetime.fromtimestamp((T0 + sequence * 1000) / 1000, UTC).replace(tzinfo=None)


def seq(sequence: int) -> str:
    return str(sequence).zfill(38)


def shuffled_with_duplicates(folder: Path) -> Rounds:
    a, b, c = ({"id": 1, "name": name} for name in "abc")
    x, again = {"id": 2, "name": "x"}, {"id": 2, "name": "again"}
    changes = [
        change("insert", 100, after=a),
        change("insert", 101, after=x),
        change("update", 102, before=a, after=b),
        change("update", 1000, before=b, after=c),
        change("delete", 1001, before=x),
        change("insert", 1002, after=again),
        # a table without a cdc_table_keys row cannot be keyed: quarantined, not dropped
        change("insert", 5, after={"id": 9}, table="nokey"),
    ]
    messages = [message for item in changes for message in datahub_tuple(item)]
    assert all(message["_source_table_"].startswith("tuple_shop.") for message in messages)
    random.Random(3).shuffle(messages)
    first, second = messages[:5], messages[5:] + messages[:3]  # the second load repeats three rows
    load1 = write_jsonl(folder / "load1.jsonl", first)
    return [
        [("datahub_tuple", load1)],
        [("datahub_tuple", write_jsonl(folder / "load2.jsonl", second)), ("datahub_tuple", load1)],
    ]


@pytest.mark.shared_rounds(scenario=shuffled_with_duplicates)
def test_stream_shuffled_with_duplicates_in_two_loads(shared: ScenarioView) -> None:
    """Insert, updates, delete, re-insert; sequence ids compared as numbers (102 < 1000)."""
    assert shared.landed[1][1]["messages"] == 0  # re-landed file: nothing new

    table = "tuple_shop.orders"
    assert shared.history() == [
        (table, '{"id":1}', 1, at(100), at(102), False, False, "insert", '{"id":1,"name":"a"}', seq(100), seq(102)),
        (table, '{"id":1}', 2, at(102), at(1000), False, False, "update", '{"id":1,"name":"b"}', seq(102), seq(1000)),
        (table, '{"id":1}', 3, at(1000), None, True, False, "update", '{"id":1,"name":"c"}', seq(1000), None),
        (table, '{"id":2}', 1, at(101), at(1001), False, False, "insert", '{"id":2,"name":"x"}', seq(101), seq(1001)),
        (table, '{"id":2}', 2, at(1001), at(1002), False, True, "delete", '{"id":2,"name":"x"}', seq(1001), seq(1002)),
        (table, '{"id":2}', 3, at(1002), None, True, False, "insert", '{"id":2,"name":"again"}', seq(1002), None),
    ]
    # metadata columns never leak into the row image
    assert shared.current() == [
        (table, '{"id":1}', '{"id":1,"name":"c"}'),
        (table, '{"id":2}', '{"id":2,"name":"again"}'),
    ]
    assert shared.query("select table_id, quarantine_reason from {schema}.cdc_quarantine") == [
        ("tuple_shop.nokey", "no key: the message declares none, seed cdc_table_keys has none, no row locator column")
    ]
