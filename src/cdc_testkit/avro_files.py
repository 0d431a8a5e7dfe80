"""Avro writers of the test streams: DTS Record datums (base64 lines or container files) under
the project's schemas, and Datastream-like container files."""

from __future__ import annotations

import base64
import datetime as dt
import io
from pathlib import Path
from typing import Any

import fastavro


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
    schema, written = _dts_writer(records, legacy_writer)
    lines = []
    for record in written:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, schema, record)
        lines.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
    return lines


def write_dts_avro(records: list[dict], path: Path, container: bool = False, legacy_writer: bool = False) -> Path:
    """Write DTS Record datums as base64 lines (`dts_avro_lines`) or as an Avro container file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if container:
        with path.open("wb") as handle:
            fastavro.writer(handle, *_dts_writer(records, legacy_writer))
        return path
    path.write_text("".join(line + "\n" for line in dts_avro_lines(records, legacy_writer)), encoding="ascii")
    return path


def _nullable(avro_type: str | dict) -> list:
    return ["null", avro_type]


AVRO_SCHEMA = {
    "type": "record",
    "name": "shop_customers",
    "fields": [
        {"name": "uuid", "type": "string"},
        {"name": "read_timestamp", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "source_timestamp", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "object", "type": "string"},
        {"name": "read_method", "type": "string"},
        {"name": "stream_name", "type": "string"},
        {"name": "schema_key", "type": "string"},
        {"name": "sort_keys", "type": {"type": "array", "items": ["string", "long"]}},
        {
            "name": "source_metadata",
            "type": {
                "type": "record",
                "name": "source_metadata",
                "fields": [
                    {"name": "table", "type": "string"},
                    {"name": "database", "type": "string"},
                    {"name": "primary_keys", "type": {"type": "array", "items": "string"}},
                    {"name": "log_file", "type": _nullable("string")},
                    {"name": "log_position", "type": _nullable("long")},
                    {"name": "change_type", "type": _nullable("string")},
                    {"name": "is_deleted", "type": _nullable("boolean")},
                ],
            },
        },
        {
            "name": "payload",
            "type": {
                "type": "record",
                "name": "payload",
                "fields": [
                    {"name": "id", "type": _nullable("long"), "default": None},
                    {"name": "name", "type": _nullable("string"), "default": None},
                    {"name": "tier", "type": _nullable("string"), "default": None},
                ],
            },
        },
    ],
}


def _as_datetime(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


def _payload_schema(events: list[dict]) -> dict:
    """The payload record of the events' columns (every one nullable), typed by their values."""
    values: dict[str, list] = {}
    for event in events:
        for name, value in event["payload"].items():
            values.setdefault(name, []).append(value)

    def avro_type(column: list) -> str:
        present = [value for value in column if value is not None]
        if any(isinstance(value, float) for value in present):
            return "double"
        if present and all(isinstance(value, bool) for value in present):
            return "boolean"
        if present and all(isinstance(value, int) and not isinstance(value, bool) for value in present):
            return "long"
        return "string"

    fields = [{"name": name, "type": _nullable(avro_type(column)), "default": None} for name, column in values.items()]
    return {"type": "record", "name": "payload", "fields": fields}


def write_datastream_avro(events: list[dict], path: Path) -> Path:
    """Write JSON-format events as a Datastream-like Avro object container file; the payload
    schema lists the events' columns (as Datastream writes one schema per table and file)."""
    schema = AVRO_SCHEMA | {
        "fields": [
            field | {"type": _payload_schema(events)} if field["name"] == "payload" else field
            for field in AVRO_SCHEMA["fields"]
        ]
    }
    records = [
        event
        | {
            "read_timestamp": _as_datetime(event["read_timestamp"]),
            "source_timestamp": _as_datetime(event["source_timestamp"]),
        }
        for event in events
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(schema), records, codec="null", sync_interval=16000)
    return path
