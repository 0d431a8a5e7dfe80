"""Google Datastream sample streams: one MySQL table, backfill then CDC, as JSON and Avro.

The same scenario feeds `sample_data/datastream_json/`, `sample_data/datastream_avro/` and
the end-to-end tests. Events are rendered by `cdc_testkit.encoders.datastream`; the Avro file
is written with fastavro under a schema shaped like real Datastream MySQL files (generic
metadata, a `source_metadata` record, a `payload` record of nullable columns,
timestamp-millis times).

    python -m cdc_testkit.datastream_samples      # regenerate the sample_data files
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path

from cdc_testkit import PROJECT_ROOT
from cdc_testkit.avro_files import write_datastream_avro
from cdc_testkit.encoders.datastream import datastream_json
from cdc_testkit.scenario import Change

log = logging.getLogger("cdc_testkit.datastream_samples")

BASE_MS = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
BINLOG = 1_000_000_000  # encoders.datastream.DATASTREAM_BINLOG_SIZE: sequence = file index * BINLOG + position


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


def backfill_events(database: str = "shop") -> list[dict]:
    return [event for item in BACKFILL for event in datastream_json(replace(item, database=database), backfill=True)]


def cdc_events(database: str = "shop") -> list[dict]:
    return [event for item in CDC for event in datastream_json(replace(item, database=database))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the Datastream sample_data files.")
    parser.add_argument("--root", type=Path, default=PROJECT_ROOT, help="project root (default: this project)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    events = backfill_events() + cdc_events()
    json_path = args.root / "sample_data" / "datastream_json" / "mysql_backfill_then_cdc.jsonl"
    json_path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    avro_path = args.root / "sample_data" / "datastream_avro" / "mysql_backfill_then_cdc.avro"
    write_datastream_avro(events, avro_path)
    log.info("wrote %d events to %s and %s", len(events), json_path, avro_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
