"""Alibaba DataWorks JSON and DataHub tuple records (the DataWorks real-time sync formats)."""

from __future__ import annotations

from cdc_testkit.scenario import COLUMN_TYPES, Change


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
    name tables as the other formats do; the rows carry no key (a key seed supplies it:
    seeds/testing/cdc_test_table_keys.csv for the suite's tables).
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
