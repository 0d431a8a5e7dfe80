"""Google Datastream MySQL events, JSON format (cdc_testkit.avro_files writes them as Avro)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid

from cdc_testkit.scenario import Change

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
