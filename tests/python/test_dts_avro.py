"""Alibaba DTS Avro, end to end: encode with the DTS schema -> land -> dbt build -> read back.

No public binary DTS samples exist: records are built with fastavro from the project's DTS
schemas (current Record, and the older Java-SDK writer schema without bornTimestamp; both
checked against Alibaba's published ones by test_dts_avro_schema).
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest

from cdc_testkit.avro_files import write_dts_avro
from cdc_testkit.encoders import dts_avro
from cdc_testkit.scenario import Change
from cdc_testkit.shared_rounds import Rounds, ScenarioView

T0 = 1_696_984_400_000


def change(kind: str, sequence: int, before=None, after=None, **extra) -> Change:
    return Change(kind, "dts_shop", "orders", sequence, T0 + sequence * 1000, ("id",), before, after, **extra)


def at(sequence: int) -> str:
    return "1".zfill(20) + str(sequence).zfill(20) + str(sequence).zfill(20)


def when(sequence: int) -> dt.datetime:
    return dt.datetime(2023, 10, 11, 0, 33, 20) + dt.timedelta(seconds=sequence)


def stream() -> list[dict]:
    changes = [
        change("begin", 1),
        change("insert", 2, after={"id": 1, "name": "tea", "amount": 2.5}),
        change("insert", 3, after={"id": 2, "name": "cake", "amount": 4.0}),
        change("commit", 4),
        change("update", 5, before={"id": 1, "name": "tea", "amount": 2.5},
               after={"id": 1, "name": "tea", "amount": 3.0}),
        change("ddl", 6, ddl="ALTER TABLE orders ADD COLUMN note VARCHAR(20)"),
        change("delete", 7, before={"id": 2, "name": "cake", "amount": 4.0}),
        change("heartbeat", 8),
        change("insert", 9, after={"id": 2, "name": "pie", "amount": 5.5, "note": "back"}),
        change(
            "update",
            10,
            before={"id": 1, "name": "tea", "amount": 3.0},
            after={"id": 1, "name": "green tea", "amount": 3.0, "note": None},
        ),
    ]  # fmt: skip
    return [record for item in changes for record in dts_avro(item)]


def shuffled_records() -> list[dict]:
    records = stream()
    records += records[::4]  # duplicates
    random.Random(5).shuffle(records)
    return records


def three_carriers(folder: Path) -> Rounds:
    records = shuffled_records()
    third = len(records) // 3
    first = [
        write_dts_avro(records[:third], folder / "a_base64.txt"),
        write_dts_avro(records[third : 2 * third], folder / "b_sdk_java_base64.txt", legacy_writer=True),
    ]
    second = write_dts_avro(records[2 * third :], folder / "c.avro", container=True)
    return [[("dts_avro", *first)], [("dts_avro", second, first[0])]]  # first[0] again: landed once only


@pytest.mark.shared_rounds(scenario=three_carriers)
def test_stream_in_two_loads_three_carriers(shared: ScenarioView) -> None:
    records = shuffled_records()

    assert shared.current() == [
        ("dts_shop.orders", '{"id":1}', '{"amount":3.0,"id":1,"name":"green tea","note":null}'),
        ("dts_shop.orders", '{"id":2}', '{"amount":5.5,"id":2,"name":"pie","note":"back"}'),
    ]
    assert shared.history() == [
        ("dts_shop.orders", '{"id":1}', 1, when(2), when(5), False, False, "insert",
         '{"amount":2.5,"id":1,"name":"tea"}', at(2), at(5)),
        ("dts_shop.orders", '{"id":1}', 2, when(5), when(10), False, False, "update",
         '{"amount":3.0,"id":1,"name":"tea"}', at(5), at(10)),
        ("dts_shop.orders", '{"id":1}', 3, when(10), None, True, False, "update",
         '{"amount":3.0,"id":1,"name":"green tea","note":null}', at(10), None),
        ("dts_shop.orders", '{"id":2}', 1, when(3), when(7), False, False, "insert",
         '{"amount":4.0,"id":2,"name":"cake"}', at(3), at(7)),
        ("dts_shop.orders", '{"id":2}', 2, when(7), when(9), False, True, "delete",
         '{"amount":4.0,"id":2,"name":"cake"}', at(7), at(9)),
        ("dts_shop.orders", '{"id":2}', 3, when(9), None, True, False, "insert",
         '{"amount":5.5,"id":2,"name":"pie","note":"back"}', at(9), None),
    ]  # fmt: skip
    assert shared.query("select table_id, vendor_op, ddl_text from {schema}.cdc_ddl_events") == [
        ("dts_shop.orders", "DDL", "ALTER TABLE orders ADD COLUMN note VARCHAR(20)")
    ]
    assert shared.query("select count(*) from {schema}.cdc_heartbeats") == [(1,)]
    assert shared.query("select count(*) from {schema}.cdc_quarantine") == [(0,)]
    ledger = shared.query("select sum(messages_landed), sum(transaction_messages) from {schema}.cdc_load_batches")
    markers = sum(1 for record in records if record["operation"] in ("BEGIN", "COMMIT"))
    assert ledger == [(len(records), markers)]
