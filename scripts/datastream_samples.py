"""Google Datastream sample streams: one MySQL table, backfill then CDC, as JSON and Avro.

The same scenario feeds `sample_data/datastream_json/`, `sample_data/datastream_avro/` and
the end-to-end tests. Events are rendered by `cdc_generate.datastream_json`; the Avro file
is written with fastavro under a schema shaped like real Datastream MySQL files (generic
metadata, a `source_metadata` record, a `payload` record of nullable columns,
timestamp-millis times).

    python scripts/datastream_samples.py            # regenerate the sample_data files
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import sys
from pathlib import Path

import fastavro
from cdc_generate import Change, datastream_json

log = logging.getLogger("datastream_samples")

BASE_MS = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
BINLOG = 1_000_000_000  # cdc_generate.DATASTREAM_BINLOG_SIZE: sequence = file index * BINLOG + position


def row(key: int, name: str, tier: str) -> dict:
    return {"id": key, "name": name, "tier": tier}


def change(kind: str, sequence: int, offset_ms: int, before: dict | None = None, after: dict | None = None) -> Change:
    return Change(kind, "shop", "customers", sequence, BASE_MS + offset_ms, ("id",), before, after)


# The initial backfill reads rows at +10 s.
BACKFILL = [
    change("insert", 0, 10_000, after=row(1, "ann", "gold")),
    change("insert", 0, 10_000, after=row(2, "bob", "gold")),
    change("insert", 0, 10_000, after=row(3, "chen", "silver")),
    change("insert", 0, 10_000, after=row(5, "eve", "gold")),
]

# CDC changes in commit order. Sequence numbers encode (binlog file, position): 3 and 4
# share a millisecond and sit in different binlog files (file 1 position 999999990 before
# file 2 position 1); change 1 is older than the backfill read of the same row.
CDC = [
    change("insert", 100, 5_000, after=row(5, "eve", "bronze")),
    change("insert", 200, 20_000, after=row(4, "dewi", "bronze")),
    change("update", 999_999_990, 21_000, before=row(1, "ann", "gold"), after=row(1, "ann", "silver")),
    change("update", BINLOG + 1, 21_000, before=row(1, "ann", "silver"), after=row(1, "ann", "bronze")),
    change("delete", BINLOG + 50, 22_000, before=row(2, "bob", "gold")),
    change("insert", BINLOG + 60, 23_000, after=row(2, "bob", "platinum")),
    change("update", BINLOG + 70, 24_000, before=row(3, "chen", "silver"), after=row(30, "chen", "silver")),
]


def backfill_events() -> list[dict]:
    return [event for item in BACKFILL for event in datastream_json(item, backfill=True)]


def cdc_events() -> list[dict]:
    return [event for item in CDC for event in datastream_json(item)]


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


def write_avro(events: list[dict], path: Path) -> Path:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the Datastream sample_data files.")
    parser.add_argument(
        "--root", type=Path, default=Path(__file__).resolve().parents[1], help="project root (default: this repo)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    events = backfill_events() + cdc_events()
    json_path = args.root / "sample_data" / "datastream_json" / "mysql_backfill_then_cdc.jsonl"
    json_path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    avro_path = write_avro(events, args.root / "sample_data" / "datastream_avro" / "mysql_backfill_then_cdc.avro")
    log.info("wrote %d events to %s and %s", len(events), json_path, avro_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
