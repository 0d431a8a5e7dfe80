"""Synthetic CDC streams: one seeded scenario of changes, rendered in any format.

A scenario is a list of source-side `Change`s in commit order (inserts, updates,
deletes, re-inserts, key changes, truncates, DDL, heartbeats, transaction markers).
Encoders render a change as the messages a vendor would send; `expected_state`
replays the scenario in Python, the oracle the SQL models are checked against.

    python scripts/cdc_generate.py --format dataworks_json --events 10000 --keys 1000 OUT_DIR
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import logging
import random
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

log = logging.getLogger("cdc_generate")

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


def expected_state(changes: list[Change]) -> tuple[dict, dict]:
    """Replay changes in sequence order: (current rows, version count per key).

    Keys are (table_id, key tuple); a version is opened by every insert or update and by a
    delete or truncate that ends a live row, as cdc_history counts them.
    """
    current: dict[tuple, dict] = {}
    versions: dict[tuple, int] = {}
    deleted: set[tuple] = set()
    for change in sorted(changes, key=lambda c: c.sequence):
        if change.kind == "truncate":
            for key in [k for k in current if k[0] == change.table_id]:
                del current[key]
                versions[key] += 1
                deleted.add(key)
            continue
        if change.kind not in ("insert", "update", "delete"):
            continue
        old_key = new_key = None
        if change.before is not None:
            old_key = (change.table_id, tuple(change.before[c] for c in change.key_columns))
        if change.after is not None:
            new_key = (change.table_id, tuple(change.after[c] for c in change.key_columns))
        leaves_old_key = change.kind == "delete" or (new_key is not None and old_key != new_key)
        if leaves_old_key and old_key in current:
            del current[old_key]
            versions[old_key] = versions.get(old_key, 0) + 1
            deleted.add(old_key)
        if change.after is not None:
            current[new_key] = change.after
            versions[new_key] = versions.get(new_key, 0) + 1
            deleted.discard(new_key)
    return current, versions


# ---------------------------------------------------------------- encoders


def _dataworks_envelope(change: Change, op: str, before: dict | None, after: dict | None) -> dict:
    columns = [{"name": name, "type": COLUMN_TYPES.get(name, "STRING")} for name in (after or before or {})]
    return {
        "schema": {
            "dataColumn": columns or None,
            "primaryKey": list(change.key_columns) if columns else None,
            "source": {"dbType": "MySQL", "dbName": change.database, "tableName": change.table},
        },
        "payload": {
            "before": {"dataColumn": before} if before is not None else None,
            "after": {"dataColumn": after} if after is not None else None,
            "sequenceId": str(change.sequence),
            "timestamp": {
                "eventTime": change.time_ms,
                "systemTime": change.time_ms + 7,
                "checkpointTime": change.time_ms,
            },
            "op": op,
            "ddl": {"text": change.ddl} if change.ddl else None,
        },
        "version": "0.0.1",
    }


def dataworks_json(change: Change, one_record_updates: bool = False) -> list[dict]:
    """DataWorks/DataHub JSON envelope (source documents 000/001)."""
    if change.kind == "insert":
        return [_dataworks_envelope(change, "INSERT", None, change.after)]
    if change.kind == "update":
        if one_record_updates:
            return [_dataworks_envelope(change, "UPDATE_AFTER", change.before, change.after)]
        return [
            _dataworks_envelope(change, "UPDATE_BEFOR", change.before, None),
            _dataworks_envelope(change, "UPDATE_AFTER", None, change.after),
        ]
    if change.kind == "delete":
        return [_dataworks_envelope(change, "DELETE", change.before, None)]
    if change.kind == "truncate":
        return [
            _dataworks_envelope(change, "TRUNCATE", None, None)
            | {"schema": {"source": {"dbType": "MySQL", "dbName": change.database, "tableName": change.table}}}
        ]
    if change.kind == "ddl":
        message = _dataworks_envelope(change, "ALTER", None, None)
        message["schema"] = {"source": {"dbType": "MySQL", "dbName": change.database, "tableName": change.table}}
        return [message]
    if change.kind == "heartbeat":
        return [
            {
                "schema": {"dataColumn": None, "primaryKey": None, "source": None},
                "payload": {
                    "before": None,
                    "after": None,
                    "sequenceId": None,
                    "timestamp": {"eventTime": change.time_ms, "checkpointTime": change.time_ms},
                    "op": "MHEARTBEAT",
                    "ddl": None,
                },
                "version": "0.0.1",
            }
        ]
    if change.kind in ("begin", "commit"):
        op = "TRANSACTION_BEGIN" if change.kind == "begin" else "TRANSACTION_END"
        message = _dataworks_envelope(change, op, None, None)
        message["schema"] = {"source": {"dbType": "MySQL", "dbName": change.database, "tableName": change.table}}
        return [message]
    raise ValueError(f"unknown change kind {change.kind!r}")


def _kafka_connect_fields(row: dict | None) -> list[dict]:
    types = {"LONG": "int64", "STRING": "string", "DOUBLE": "float64", "BOOLEAN": "boolean"}
    fields = []
    for name in row or {}:
        kind = COLUMN_TYPES.get(name, "STRING")
        if kind == "DATE":
            fields.append({"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "field": name})
        else:
            fields.append({"type": types.get(kind, "string"), "optional": True, "field": name})
    return fields


def cdl_json(change: Change) -> list[dict]:
    """Huawei CDL JSON, message_version 1.0 (source document 003), with its Kafka Connect schema."""
    operation = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}.get(change.kind)
    payload = {
        "DATA_STORE": "POSTGRESQL",
        "SEG_OWNER": change.database,
        "TABLE_NAME": change.table,
        "TIMESTAMP": change.time_ms,
        "OPERATION": operation,
        "LOB_COLUMNS": None,
        "transaction": {"properties": [{"name": "lsn", "value": change.sequence}, {"name": "txId", "value": 1000}]},
        "unique": {column: (change.after or change.before)[column] for column in change.key_columns}
        if operation
        else None,
        "data": change.after,
        "before": change.before,
        "message_version": "1.0",
        "message_type": "0",
        "HEARTBEAT_IDENTIFIER": "279fb050-0143-45c1-b184-50bc48c2461c",
    }
    if change.kind == "heartbeat":
        payload = {"DATA_STORE": "POSTGRESQL", "TIMESTAMP": change.time_ms, "message_version": "1.0"}
        payload |= {"message_type": "1", "HEARTBEAT_IDENTIFIER": "279fb050-0143-45c1-b184-50bc48c2461c"}
    elif change.kind == "truncate":
        raise ValueError("CDL JSON has no truncate message")
    elif operation is None:
        return []  # CDL JSON has no DDL or transaction messages
    image_fields = _kafka_connect_fields(change.after or change.before)
    schema = {
        "type": "struct",
        "fields": [
            {"type": "struct", "fields": image_fields, "optional": True, "name": "data", "field": "data"},
            {"type": "struct", "fields": image_fields, "optional": True, "name": "before", "field": "before"},
        ],
        "optional": False,
        "name": f"{change.database}.{change.table}",
    }
    return [{"schema": schema, "payload": payload}]


def debezium_json(change: Change, with_schema: bool = True, tombstones: bool = True) -> list[dict | None]:
    """Debezium JSON (PostgreSQL connector), with or without the schema/payload wrapper.

    A delete is followed by a tombstone (`None`, written as the line `null`) when `tombstones`.
    """
    source = {
        "version": "2.5.0.Final",
        "connector": "postgresql",
        "name": "cdc",
        "ts_ms": change.time_ms,
        "snapshot": "false",
        "db": "pg",
        "schema": change.database,
        "table": change.table,
        "txId": 1000,
        "lsn": change.sequence,
    }
    op = {"insert": "c", "update": "u", "delete": "d", "truncate": "t"}.get(change.kind)
    if change.kind == "heartbeat":
        return [{"ts_ms": change.time_ms}]
    if change.kind in ("begin", "commit"):
        status = "BEGIN" if change.kind == "begin" else "END"
        return [{"status": status, "id": f"1000:{change.sequence}", "event_count": None, "ts_ms": change.time_ms}]
    if change.kind == "ddl":
        return []  # Debezium's PostgreSQL connector emits no DDL events
    if op is None:
        raise ValueError(f"unknown change kind {change.kind!r}")
    payload = {
        "before": change.before,
        "after": change.after,
        "source": source,
        "op": op,
        "ts_ms": change.time_ms + 5,
        "transaction": None,
    }
    messages: list[dict | None] = []
    if with_schema:
        image_fields = _kafka_connect_fields(change.after or change.before)
        schema = {
            "type": "struct",
            "fields": [
                {"type": "struct", "fields": image_fields, "optional": True, "field": "before"},
                {"type": "struct", "fields": image_fields, "optional": True, "field": "after"},
                {"type": "string", "optional": False, "field": "op"},
                {"type": "int64", "optional": True, "field": "ts_ms"},
            ],
            "optional": False,
            "name": f"cdc.{change.database}.{change.table}.Envelope",
        }
        messages.append({"schema": schema, "payload": payload})
    else:
        messages.append(payload)
    if op == "d" and tombstones:
        messages.append(None)
    return messages


TUPLE_METADATA = (
    "_sequence_id_",
    "_operation_type_",
    "_excute_time_",
    "_source_table_",
    "_before_image_",
    "_after_image_",
)


def _tuple_row(change: Change, op: str, image: dict, is_before: bool) -> dict:
    return {
        "_sequence_id_": str(change.sequence),
        "_operation_type_": op,
        "_excute_time_": change.time_ms,
        "_source_table_": change.table_id,
        "_before_image_": "Y" if is_before else "N",
        "_after_image_": "N" if is_before else "Y",
        **image,
    }


def datahub_tuple(change: Change) -> list[dict]:
    """DataHub TUPLE topic rows (source document 000): one flat row, two for an update.

    `_source_table_` is written database-qualified (`change.table_id`) so that generated streams
    name tables as the other formats do; the rows carry no key (seed cdc_table_keys supplies it).
    TUPLE topics cannot carry DDL, heartbeats or transaction markers: those changes render as
    nothing; a truncate cannot be expressed at all.
    """
    if change.kind == "insert":
        return [_tuple_row(change, "I", change.after, is_before=False)]
    if change.kind == "update":
        return [
            _tuple_row(change, "U", change.before, is_before=True),
            _tuple_row(change, "U", change.after, is_before=False),
        ]
    if change.kind == "delete":
        return [_tuple_row(change, "D", change.before, is_before=True)]
    if change.kind in ("ddl", "heartbeat", "begin", "commit"):
        return []
    raise ValueError(f"datahub_tuple cannot express a {change.kind!r} change")


def _shareplex_rowid(change: Change, row: dict) -> str:
    """A stable fake Oracle rowid for the row's first key value (the physical row)."""
    digest = sum(
        ord(char) * (number + 1) for number, char in enumerate(f"{change.table_id}:{row[change.key_columns[0]]}")
    )
    return f"AAATGpAAIAA{digest:07d}"[:18]


def _shareplex_meta(change: Change, op: str, row: dict | None) -> dict:
    meta = {
        "time": datetime.fromtimestamp(change.time_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S"),
        "userid": 84,
        "op": op,
        "scn": str(change.sequence),
        "trans": f"{change.sequence % 13}.{change.sequence % 7}.{change.sequence % 1_000_000}",
        "seq": 1,
        "size": 1,
        "table": change.table_id,
        "idx": "1/1",
        "posttime": datetime.fromtimestamp(change.time_ms / 1000 + 5, UTC).strftime("%Y-%m-%dT%H:%M:%S"),
    }
    if row is not None:
        meta["rowid"] = _shareplex_rowid(change, row)
    return meta


def shareplex_json(change: Change) -> list[dict]:
    """DTS "Shareplex Json" (source document 002).

    Inserts and deletes carry the whole row in `data`; an update carries only the changed columns
    in `data` and, in `key`, the before values of the key columns and of the changed columns.
    SharePlex JSON has no heartbeats or transaction markers (they render as nothing); other DDL is
    rendered as the only DDL op the document names besides TRUNCATE, `DROP COLUMN`.
    """
    if change.kind == "insert":
        return [{"meta": _shareplex_meta(change, "ins", change.after), "data": change.after}]
    if change.kind == "update":
        before, after = change.before or {}, change.after or {}
        changed = {name: value for name, value in after.items() if name not in before or before[name] != value}
        key = {name: before.get(name) for name in (*change.key_columns, *changed) if name in before}
        return [{"meta": _shareplex_meta(change, "upd", before), "data": changed, "key": key}]
    if change.kind == "delete":
        return [{"meta": _shareplex_meta(change, "del", change.before), "data": change.before}]
    if change.kind == "truncate":
        return [{"meta": _shareplex_meta(change, "TRUNCATE", None)}]
    if change.kind == "ddl":
        return [{"meta": _shareplex_meta(change, "DROP COLUMN", None)}]
    if change.kind in ("heartbeat", "begin", "commit"):
        return []
    raise ValueError(f"unknown change kind {change.kind!r}")


CANAL_MYSQL_TYPES = {
    "LONG": "bigint",
    "STRING": "varchar(255)",
    "DOUBLE": "double",
    "BOOLEAN": "tinyint(1)",
    "DATE": "datetime(3)",
}


DATASTREAM_STREAM = "projects/demo/locations/us-central1/streams/mysql-stream"
DATASTREAM_BINLOG_SIZE = 1_000_000_000  # positions per binlog file: sequence -> (file number, position)


def datastream_timestamp(time_ms: int) -> str:
    """Datastream JSON renders times as UTC without a zone, e.g. "2021-12-25T05:42:04.408"."""
    moment = dt.datetime.fromtimestamp(time_ms / 1000, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{time_ms % 1000:03d}"


def _datastream_event(
    change: Change, change_type: str, payload: dict, part: int = 0, backfill: bool = False, read_delay_ms: int = 1500
) -> dict:
    if backfill:
        log_file, position = "", 0
    else:
        log_file = f"mysql-bin.{1 + change.sequence // DATASTREAM_BINLOG_SIZE:06d}"
        position = change.sequence % DATASTREAM_BINLOG_SIZE
    identity = (
        f"{change.table_id}/{change.sequence}/{change_type}/{part}/{backfill}/{json.dumps(payload, sort_keys=True)}"
    )
    return {
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, identity)),
        "read_timestamp": datastream_timestamp(change.time_ms + read_delay_ms),
        "source_timestamp": datastream_timestamp(change.time_ms),
        "object": f"{change.database}_{change.table}",
        "read_method": "mysql-backfill-fulldump" if backfill else "mysql-cdc-binlog",
        "stream_name": DATASTREAM_STREAM,
        "schema_key": hashlib.sha1(",".join(sorted(payload)).encode()).hexdigest(),
        "sort_keys": [change.time_ms, log_file, position],
        "source_metadata": {
            "table": change.table,
            "database": change.database,
            "primary_keys": list(change.key_columns),
            "log_file": log_file,
            "log_position": position,
            "change_type": change_type,
            "is_deleted": change_type in ("DELETE", "UPDATE-DELETE"),
        },
        "payload": payload,
    }


def datastream_json(change: Change, backfill: bool = False) -> list[dict]:
    """Google Datastream MySQL event (source document 004), JSON format.

    An update is one UPDATE-INSERT with the whole new row; an update that changes the key
    is an UPDATE-DELETE of the old row and an UPDATE-INSERT of the new one at the same log
    position. `backfill` renders an insert as a backfill (fulldump) row. Datastream has no
    DDL, heartbeat, transaction or truncate events: those changes render as nothing.
    """
    if change.kind == "insert":
        return [_datastream_event(change, "INSERT", change.after, backfill=backfill)]
    if backfill:
        raise ValueError("a backfill renders inserts (the rows as read) only")
    if change.kind == "update":
        old_key = tuple(change.before[c] for c in change.key_columns)
        new_key = tuple(change.after[c] for c in change.key_columns)
        if old_key != new_key:
            return [
                _datastream_event(change, "UPDATE-DELETE", change.before, part=0),
                _datastream_event(change, "UPDATE-INSERT", change.after, part=1),
            ]
        return [_datastream_event(change, "UPDATE-INSERT", change.after)]
    if change.kind == "delete":
        return [_datastream_event(change, "DELETE", change.before)]
    if change.kind in ("ddl", "heartbeat", "begin", "commit"):
        return []
    if change.kind == "truncate":
        raise ValueError("Datastream has no truncate event")
    raise ValueError(f"unknown change kind {change.kind!r}")


def _canal_text(name: str, value: object) -> str | None:
    """Canal writes every value as text; DATE columns (epoch ms here) as MySQL datetime text."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if COLUMN_TYPES.get(name) == "DATE" and isinstance(value, int):
        moment = dt.datetime.fromtimestamp(value / 1000, tz=dt.UTC)
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{value % 1000:03d}"
    return str(value)


def canal_json(change: Change, legacy: bool = False) -> list[dict]:
    """Alibaba DTS Canal JSON (source document 002), one row per message.

    `legacy`: the layout of instances created before 2022-03-20 (data and old swapped,
    a DELETE's row in `old`, `old` complete). Heartbeats and transaction markers are not
    part of Canal JSON: they render as no message.
    """
    if change.kind in ("heartbeat", "begin", "commit"):
        return []
    message: dict = {
        "data": None,
        "database": change.database,
        "es": change.time_ms,
        "id": change.sequence,
        "isDdl": change.kind in ("ddl", "truncate"),
        "mysqlType": None,
        "old": None,
        "pkNames": None,
        "sql": "",
        "sqlType": None,
        "table": change.table,
        "ts": change.time_ms + 7,
        "type": {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE", "truncate": "TRUNCATE", "ddl": "ALTER"}[
            change.kind
        ],
    }
    if change.kind == "truncate":
        message["sql"] = f"TRUNCATE TABLE {change.table}"
        return [message]
    if change.kind == "ddl":
        message["sql"] = change.ddl or f"ALTER TABLE {change.table} COMMENT 'changed'"
        return [message]
    image = change.after if change.after is not None else change.before or {}
    message["mysqlType"] = {name: CANAL_MYSQL_TYPES[COLUMN_TYPES.get(name, "STRING")] for name in image}
    message["pkNames"] = list(change.key_columns)
    after = {name: _canal_text(name, value) for name, value in (change.after or {}).items()}
    before = {name: _canal_text(name, value) for name, value in (change.before or {}).items()}
    if change.kind == "insert":
        message["old" if legacy else "data"] = [after]
    elif change.kind == "delete":
        message["old" if legacy else "data"] = [before]
    elif legacy:
        message["data"], message["old"] = [before], [after]
    else:
        changed = {name: value for name, value in before.items() if after.get(name) != value}
        message["data"], message["old"] = [after], [changed]
    return [message]


DTS_NAMESPACE = "com.alibaba.dts.formats.avro."
DTS_TYPE_NUMBERS = {"LONG": 8, "STRING": 253, "DOUBLE": 5, "BOOLEAN": 1, "DATE": 12}  # MySQL type codes


def _dts_value(name: str, value: object) -> object:
    """A column value as a DTS Avro union branch: (record name, record), as fastavro writes it."""
    if value is None:
        return None
    kind = COLUMN_TYPES.get(name, "STRING")
    if isinstance(value, bool) or kind == "BOOLEAN":
        return (DTS_NAMESPACE + "Integer", {"precision": 1, "value": "1" if value else "0"})
    if isinstance(value, int) and kind == "DATE":
        return (DTS_NAMESPACE + "Timestamp", {"timestamp": value // 1000, "millis": value % 1000})
    if isinstance(value, int):
        return (DTS_NAMESPACE + "Integer", {"precision": 20, "value": str(value)})
    if isinstance(value, float):
        return (DTS_NAMESPACE + "Float", {"value": value, "precision": 22, "scale": 0})
    return (DTS_NAMESPACE + "Character", {"charset": "utf8mb4", "value": str(value).encode("utf-8")})


def dts_avro(change: Change) -> list[dict]:
    """Alibaba DTS Avro Record datums (document 002) as dicts for fastavro's writers: union
    records as (name, record) tuples. Serialise with `write_dts_avro`. Binlog positions are
    made up as `offset@1` from the sequence."""
    operation = {
        "insert": "INSERT",
        "update": "UPDATE",
        "delete": "DELETE",
        "ddl": "DDL",
        "truncate": "DDL",
        "heartbeat": "HEARTBEAT",
        "begin": "BEGIN",
        "commit": "COMMIT",
    }[change.kind]
    image = change.after if change.after is not None else change.before
    # one field list describes both images (DTS writes every column in each), so an image that
    # lacks a column another has (added by DDL in between) carries it as null
    names = list(dict.fromkeys([*(change.after or {}), *(change.before or {})]))
    record: dict = {
        "version": 0,
        "id": change.sequence,
        "sourceTimestamp": change.time_ms // 1000,
        "sourcePosition": f"{change.sequence % 10**15}@1",
        "safeSourcePosition": f"{change.sequence % 10**15}@1",
        "sourceTxid": "0",
        "source": {"sourceType": "MySQL", "version": "8.0.28"},
        "operation": operation,
        "objectName": change.table_id,
        "processTimestamps": None,
        "tags": {"pk_uk_info": json.dumps({"PRIMARY": list(change.key_columns)})} if image else {},
        "fields": [{"name": n, "dataTypeNumber": DTS_TYPE_NUMBERS[COLUMN_TYPES.get(n, "STRING")]} for n in names]
        if image
        else None,
        "beforeImages": [_dts_value(n, change.before.get(n)) for n in names] if change.before else None,
        "afterImages": [_dts_value(n, change.after.get(n)) for n in names] if change.after else None,
        "bornTimestamp": change.time_ms,
    }
    if change.kind in ("ddl", "truncate"):
        record["afterImages"] = change.ddl or f"TRUNCATE TABLE {change.table}"
    return [record]


def _dts_writer(records: list[dict], legacy_writer: bool = False) -> tuple[Any, list[dict]]:
    """The DTS Record writer schema and the records as it takes them: the project's schemas
    named in dbt_project.yml (schemas/dts_avro/). `legacy_writer`: the older Record schema of
    Alibaba's Java SDK, which has no bornTimestamp."""
    from cdc_dbt_spark.avro import load_schema
    from cdc_dbt_spark.loader import project_formats

    settings = project_formats()["dts_avro"]
    if not legacy_writer:
        return load_schema(settings["avro_schema"]), records
    legacy = [{k: v for k, v in record.items() if k != "bornTimestamp"} for record in records]
    return load_schema(settings["avro_writer_schemas"][0]), legacy


def dts_avro_lines(records: list[dict], legacy_writer: bool = False) -> list[str]:
    """DTS Record datums as base64 text, one datum a line (the carrier DTS consumers often log)."""
    import base64
    import io

    import fastavro

    schema, written = _dts_writer(records, legacy_writer)
    lines = []
    for record in written:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, schema, record)
        lines.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
    return lines


def write_dts_avro(records: list[dict], path: Path, container: bool = False, legacy_writer: bool = False) -> Path:
    """Write DTS Record datums as base64 lines (`dts_avro_lines`) or as an Avro container file."""
    import fastavro

    path.parent.mkdir(parents=True, exist_ok=True)
    if container:
        with path.open("wb") as handle:
            fastavro.writer(handle, *_dts_writer(records, legacy_writer))
        return path
    path.write_text("".join(line + "\n" for line in dts_avro_lines(records, legacy_writer)), encoding="ascii")
    return path


ENCODERS: dict[str, Callable[[Change], list[dict | None]]] = {
    "dataworks_json": dataworks_json,
    "cdl_json": cdl_json,
    "debezium_json": debezium_json,
    "datahub_tuple": datahub_tuple,
    "shareplex_json": shareplex_json,
    "canal_json": canal_json,
    "dts_avro": dts_avro,
    "datastream_json": datastream_json,
    "datastream_avro": datastream_json,  # the same events, written as Avro container files
}


# the formats whose streams cannot carry a truncate: scenarios for them must not contain one
CANNOT_TRUNCATE = frozenset({"datahub_tuple", "cdl_json", "datastream_json", "datastream_avro"})
# the formats whose files are binary containers, not lines of text
CONTAINER_FORMATS = frozenset({"datastream_avro"})


def messages(changes: list[Change], source_format: str) -> Iterator[dict | None]:
    encoder = ENCODERS[source_format]
    for change in changes:
        yield from encoder(change)


def message_lines(changes: list[Change], source_format: str) -> list[str]:
    """Each message as one line of its carrier: JSON text, or a base64 Avro datum for dts_avro."""
    if source_format in CONTAINER_FORMATS:
        raise ValueError(f"{source_format} is written as container files, not lines: use write_stream")
    if source_format == "dts_avro":
        return dts_avro_lines(list(messages(changes, source_format)))
    return [
        json.dumps(message, ensure_ascii=False, separators=(",", ":")) for message in messages(changes, source_format)
    ]


def write_stream(
    changes: list[Change],
    source_format: str,
    out_dir: Path,
    files: int = 1,
    seed: int = 0,
    duplicate_share: float = 0.0,
    shuffle: bool = True,
) -> list[Path]:
    """Write the scenario's messages into `files` files, shuffled and with duplicates: lines of
    `message_lines`, or Avro container files for the container formats."""
    rng = random.Random(seed)
    if source_format in CONTAINER_FORMATS:
        from datastream_samples import write_avro

        events = list(messages(changes, source_format))
        events += [event for event in events if rng.random() < duplicate_share]
        if shuffle:
            rng.shuffle(events)
        paths = [out_dir / f"{source_format}-{seed}-{number:03d}.avro" for number in range(files)]
        return [write_avro(events[number::files], path) for number, path in enumerate(paths)]
    rendered = message_lines(changes, source_format)
    rendered += [text for text in rendered if rng.random() < duplicate_share]
    if shuffle:
        rng.shuffle(rendered)
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = "txt" if source_format == "dts_avro" else "jsonl"
    paths = [out_dir / f"{source_format}-{seed}-{number:03d}.{suffix}" for number in range(files)]
    handles = [path.open("w", encoding="utf-8") for path in paths]
    try:
        for number, text in enumerate(rendered):
            handles[number % files].write(text + "\n")
    finally:
        for handle in handles:
            handle.close()
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a synthetic CDC stream in one format.")
    parser.add_argument("--format", default="dataworks_json", choices=sorted(ENCODERS))
    parser.add_argument("--seed", type=int, default=1, help="random seed of the scenario")
    parser.add_argument("--events", type=int, default=10_000, help="source changes to generate")
    parser.add_argument("--keys", type=int, default=1_000, help="keys per table")
    parser.add_argument("--tables", type=int, default=3, help="number of source tables")
    parser.add_argument("--files", type=int, default=1, help="spread the messages over this many files")
    parser.add_argument("--duplicate-share", type=float, default=0.0, help="share of messages sent twice")
    parser.add_argument("--no-shuffle", action="store_true", help="keep messages in commit order")
    parser.add_argument("out_dir", type=Path, help="folder to write the files into")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    scenario = Scenario(seed=args.seed, tables=args.tables, keys=args.keys, events=args.events)
    changes = scenario.generate()
    paths = write_stream(
        changes, args.format, args.out_dir, args.files, args.seed, args.duplicate_share, not args.no_shuffle
    )
    log.info("wrote %d changes as %s into %d files under %s", len(changes), args.format, len(paths), args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
