"""Alibaba DTS Avro, end to end: encode with the DTS schema -> land -> dbt build -> read back.

No public binary DTS samples exist: records are built with fastavro from the project's DTS
schemas (current Record, and the older Java-SDK writer schema without bornTimestamp; both
checked against Alibaba's published ones by test_dts_avro_schema).
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

from cdc_testkit.avro_files import write_dts_avro
from cdc_testkit.encoders import dts_avro
from cdc_testkit.scenario import Change

T0 = 1_696_984_400_000


def change(kind: str, sequence: int, before=None, after=None, **extra) -> Change:
    return Change(kind, "shop", "orders", sequence, T0 + sequence * 1000, ("id",), before, after, **extra)


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


def test_stream_in_two_loads_three_carriers(project, tmp_path: Path) -> None:
    records = stream()
    records += records[::4]  # duplicates
    random.Random(5).shuffle(records)
    third = len(records) // 3
    first = [
        write_dts_avro(records[:third], tmp_path / "a_base64.txt"),
        write_dts_avro(records[third : 2 * third], tmp_path / "b_sdk_java_base64.txt", legacy_writer=True),
    ]
    project.land("dts_avro", *first)
    project.build(tests=False)
    second = write_dts_avro(records[2 * third :], tmp_path / "c.avro", container=True)
    project.land("dts_avro", second, first[0])  # first[0] again: landed once only
    project.build()

    assert project.current() == [
        ("shop.orders", '{"id":1}', '{"amount":3.0,"id":1,"name":"green tea","note":null}'),
        ("shop.orders", '{"id":2}', '{"amount":5.5,"id":2,"name":"pie","note":"back"}'),
    ]
    assert project.history() == [
        ("shop.orders", '{"id":1}', 1, when(2), when(5), False, False, "insert",
         '{"amount":2.5,"id":1,"name":"tea"}', at(2), at(5)),
        ("shop.orders", '{"id":1}', 2, when(5), when(10), False, False, "update",
         '{"amount":3.0,"id":1,"name":"tea"}', at(5), at(10)),
        ("shop.orders", '{"id":1}', 3, when(10), None, True, False, "update",
         '{"amount":3.0,"id":1,"name":"green tea","note":null}', at(10), None),
        ("shop.orders", '{"id":2}', 1, when(3), when(7), False, False, "insert",
         '{"amount":4.0,"id":2,"name":"cake"}', at(3), at(7)),
        ("shop.orders", '{"id":2}', 2, when(7), when(9), False, True, "delete",
         '{"amount":4.0,"id":2,"name":"cake"}', at(7), at(9)),
        ("shop.orders", '{"id":2}', 3, when(9), None, True, False, "insert",
         '{"amount":5.5,"id":2,"name":"pie","note":"back"}', at(9), None),
    ]  # fmt: skip
    assert project.query("select table_id, vendor_op, ddl_text from {schema}.cdc_ddl_events") == [
        ("shop.orders", "DDL", "ALTER TABLE orders ADD COLUMN note VARCHAR(20)")
    ]
    assert project.query("select count(*) from {schema}.cdc_heartbeats") == [(1,)]
    assert project.query("select count(*) from {schema}.cdc_quarantine") == [(0,)]
    ledger = project.query("select sum(messages_landed), sum(transaction_messages) from {schema}.cdc_load_batches")
    markers = sum(1 for record in records if record["operation"] in ("BEGIN", "COMMIT"))
    assert ledger == [(len(records), markers)]
