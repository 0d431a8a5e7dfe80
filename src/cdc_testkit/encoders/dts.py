"""The formats Alibaba DTS delivers to Kafka: DTS Avro records, SharePlex JSON and Canal JSON.
The Avro records are dicts for fastavro; cdc_testkit.avro_files serialises them."""

from __future__ import annotations

import datetime as dt
import json
from datetime import UTC, datetime

from cdc_testkit.scenario import COLUMN_TYPES, Change


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
