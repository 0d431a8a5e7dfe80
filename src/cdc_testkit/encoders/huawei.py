"""Huawei CDL JSON and the Debezium JSON its Kafka Connect pipelines carry."""

from __future__ import annotations

from cdc_testkit.scenario import COLUMN_TYPES, Change


def _kafka_connect_fields(row: dict | None) -> list[dict]:
    types = {"LONG": "int64", "STRING": "string", "DOUBLE": "double", "BOOLEAN": "boolean"}
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
