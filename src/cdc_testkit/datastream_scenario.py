"""The Datastream test stream (cdc_testkit.datastream_samples) and the history it must give.

Shared by the JSON and Avro end-to-end tests: both formats carry the same events, so
both must give exactly the same cdc_history.
"""

from __future__ import annotations

import datetime as dt
import random

from cdc_testkit.datastream_samples import BASE_MS, BINLOG, backfill_events, cdc_events
from cdc_testkit.harness import THIRDPARTY as SHARED_THIRDPARTY

THIRDPARTY = SHARED_THIRDPARTY / "datastream"

TABLE = "shop.customers"
BACKFILL_MS = 10_000


def at(offset_ms: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=BASE_MS + offset_ms)


def cdc_sequence(offset_ms: int, sequence: int) -> str:
    """Source timestamp, phase 1 (CDC), binlog file number, log position."""
    return f"{BASE_MS + offset_ms:015d}.1.{1 + sequence // BINLOG:020d}.{sequence % BINLOG:020d}"


BACKFILL_SEQUENCE = f"{BASE_MS + BACKFILL_MS:015d}.0..{0:020d}"  # phase 0, no log position


def row(key: int, name: str, tier: str) -> str:
    return f'{{"id":{key},"name":"{name}","tier":"{tier}"}}'


# key -> versions (op, is_deleted, row, offset_ms, sequence)
VERSIONS = {
    1: [
        ("snapshot", False, row(1, "ann", "gold"), BACKFILL_MS, BACKFILL_SEQUENCE),
        ("update", False, row(1, "ann", "silver"), 21_000, cdc_sequence(21_000, 999_999_990)),
        # same millisecond, next binlog file: the file number orders them
        ("update", False, row(1, "ann", "bronze"), 21_000, cdc_sequence(21_000, BINLOG + 1)),
    ],
    2: [
        ("snapshot", False, row(2, "bob", "gold"), BACKFILL_MS, BACKFILL_SEQUENCE),
        ("delete", True, row(2, "bob", "gold"), 22_000, cdc_sequence(22_000, BINLOG + 50)),
        ("insert", False, row(2, "bob", "platinum"), 23_000, cdc_sequence(23_000, BINLOG + 60)),
    ],
    # key change 3 -> 30: UPDATE-DELETE ends 3, UPDATE-INSERT opens 30, same position
    3: [
        ("snapshot", False, row(3, "chen", "silver"), BACKFILL_MS, BACKFILL_SEQUENCE),
        ("delete", True, row(3, "chen", "silver"), 24_000, cdc_sequence(24_000, BINLOG + 70)),
    ],
    30: [("update", False, row(30, "chen", "silver"), 24_000, cdc_sequence(24_000, BINLOG + 70))],
    4: [("insert", False, row(4, "dewi", "bronze"), 20_000, cdc_sequence(20_000, 200))],
    # a CDC insert older than the backfill read: the backfill row (newer) wins
    5: [
        ("insert", False, row(5, "eve", "bronze"), 5_000, cdc_sequence(5_000, 100)),
        ("snapshot", False, row(5, "eve", "gold"), BACKFILL_MS, BACKFILL_SEQUENCE),
    ],
}


def expected_history(table: str = TABLE) -> list[tuple]:
    rows = []
    for key, versions in VERSIONS.items():
        for number, (op, deleted, image, offset, sequence) in enumerate(versions, start=1):
            following = versions[number] if number < len(versions) else None
            rows.append(
                (
                    table,
                    f'{{"id":{key}}}',
                    number,
                    at(offset),
                    at(following[3]) if following else None,
                    following is None,
                    deleted,
                    op,
                    image,
                    sequence,
                    following[4] if following else None,
                )
            )
    return sorted(rows, key=lambda r: (r[1], r[2]))


def expected_current(table: str = TABLE) -> list[tuple]:
    return [
        (t, k, image)
        for t, k, _v, _f, _to, current, deleted, _op, image, _s, _e in expected_history(table)
        if current and not deleted
    ]


def two_loads(seed: int = 3, database: str = "shop") -> tuple[list[dict], list[dict]]:
    """CDC first (with an exact re-send), then the backfill (arriving after the CDC changes it
    precedes) with a re-send of one backfill event read again later (same uuid, other
    read_timestamp) and a re-send of the key change; each load shuffled. In `database`: the JSON
    and Avro tests build together (cdc_testkit.shared_rounds), each in a database of its own."""
    cdc = cdc_events(database)
    backfill = backfill_events(database)
    resent_backfill = dict(backfill[0], read_timestamp="2023-11-14T22:14:59.999")
    key_change = [event for event in cdc if event["source_metadata"]["change_type"] == "UPDATE-DELETE"]
    first = [*cdc, cdc[2]]
    second = [*backfill, resent_backfill, *key_change]
    rng = random.Random(seed)
    rng.shuffle(first)
    rng.shuffle(second)
    return first, second
