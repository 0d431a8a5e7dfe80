"""Synthetic CDC scenarios: a seeded, random but valid list of source-side changes.

A scenario is a list of `Change`s in commit order (inserts, updates, deletes, re-inserts, key
changes, truncates, DDL, heartbeats, transaction markers). The encoders (cdc_testkit.encoders)
render a change as the messages a vendor would send; cdc_testkit.oracle replays the changes in
Python, the oracle the SQL models are checked against.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

BASE_SEQUENCE = 1_700_000_000_000_000_000
BASE_TIME_MS = 1_700_000_000_000


@dataclass(frozen=True)
class Change:
    """One source-side change, in commit order (`sequence` increases)."""

    kind: str  # insert | update | delete | truncate | ddl | heartbeat | begin | commit
    database: str
    table: str
    sequence: int
    time_ms: int
    key_columns: tuple[str, ...] = ("id",)
    before: dict | None = None
    after: dict | None = None
    ddl: str | None = None

    @property
    def table_id(self) -> str:
        return f"{self.database}.{self.table}"


COLUMN_TYPES = {
    "id": "LONG",
    "region": "STRING",
    "name": "STRING",
    "amount": "DOUBLE",
    "active": "BOOLEAN",
    "updated": "DATE",
}


@dataclass
class Scenario:
    """Parameters of a random but valid stream of changes."""

    seed: int = 1
    tables: int = 3
    keys: int = 50
    events: int = 500
    delete_share: float = 0.1
    key_change_share: float = 0.02
    truncate_every: int = 0  # a truncate every N changes (0: none)
    ddl_every: int = 97
    heartbeat_every: int = 50
    transaction_markers: bool = True
    equal_time_share: float = 0.2  # share of changes committed in the same ms as the previous one
    changes: list[Change] = field(default_factory=list)

    def generate(self) -> list[Change]:
        self.changes = list(self.stream())
        return self.changes

    def stream(self) -> Iterator[Change]:
        """The changes one at a time, in commit order (a stream of any length in little memory)."""
        rng = random.Random(self.seed)
        live: dict[tuple[str, int], dict] = {}
        sequence = BASE_SEQUENCE
        time_ms = BASE_TIME_MS

        def next_position() -> tuple[int, int]:
            nonlocal sequence, time_ms
            sequence += rng.randint(1, 3)
            if rng.random() >= self.equal_time_share:
                time_ms += rng.randint(1, 5_000)
            return sequence, time_ms

        def row(table: str, key: int) -> dict:
            return {
                "id": key,
                "region": f"r{key % 7}",
                "name": rng.choice(["ann", "bob", "chen", "dewi", "émile", None]),
                "amount": round(rng.uniform(-1000, 1000), 2),
                "active": rng.random() < 0.5,
                "updated": time_ms,
            }

        for number in range(self.events):
            table = f"t{rng.randrange(self.tables)}"
            database = "shop"
            if self.heartbeat_every and number % self.heartbeat_every == self.heartbeat_every - 1:
                seq, ts = next_position()
                yield Change("heartbeat", database, "", seq, ts)
                continue
            if self.ddl_every and number % self.ddl_every == self.ddl_every - 1:
                seq, ts = next_position()
                yield Change("ddl", database, table, seq, ts, ddl=f"alter table {table} add column c{number} text")
                continue
            if self.truncate_every and number % self.truncate_every == self.truncate_every - 1:
                seq, ts = next_position()
                yield Change("truncate", database, table, seq, ts)
                for live_key in [k for k in live if k[0] == table]:
                    del live[live_key]
                continue
            key = rng.randrange(self.keys)
            seq, ts = next_position()
            if self.transaction_markers and rng.random() < 0.05:
                yield Change("begin", database, table, seq, ts)
                seq, ts = next_position()
            current = live.get((table, key))
            if current is None:
                after = row(table, key)
                yield Change("insert", database, table, seq, ts, after=after)
                live[(table, key)] = after
            elif rng.random() < self.delete_share:
                yield Change("delete", database, table, seq, ts, before=current)
                del live[(table, key)]
            elif rng.random() < self.key_change_share and (table, key + self.keys) not in live:
                after = dict(current, id=key + self.keys, name="moved")
                yield Change("update", database, table, seq, ts, before=current, after=after)
                del live[(table, key)]
                live[(table, key + self.keys)] = after
            else:
                after = dict(row(table, key), region=current["region"])
                yield Change("update", database, table, seq, ts, before=current, after=after)
                live[(table, key)] = after
