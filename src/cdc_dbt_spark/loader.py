"""Land CDC messages, untouched, in the `raw_cdc_messages` table.

    cdc-load --format dataworks_json PATH [PATH ...]
    python scripts/load_raw.py --format dataworks_json PATH [PATH ...]

Every message of every file (or of every file below a folder) becomes one row
holding its exact text, its format, the file and position it came from, and
the landing batch. Files are recognised by their content (SHA-256): a file
landed before is skipped, so re-running a load lands nothing twice. A batch
becomes visible in one step (its partition is registered after its data is
written), so a load killed part-way leaves nothing half-landed and the next
run lands the rest.

Exit codes: 0 landed (or nothing new to land), 2 bad arguments, unreadable input or a
schema file named in dbt_project.yml that is missing or unreadable.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import shutil
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from cdc_dbt_spark.avro import AvroSchemaError, check_schemas, split_avro
from cdc_dbt_spark.connection import PROJECT_ROOT, SqlConnection, connect
from cdc_dbt_spark.messages import Message, read_bytes, split_json_text

log = logging.getLogger("cdc_load")

LANDING_TABLE = "raw_cdc_messages"
LANDING_COLUMNS = pa.schema(
    [
        ("message_id", pa.string()),
        ("source_file", pa.string()),
        ("source_file_sha256", pa.string()),
        ("message_index", pa.int64()),
        ("byte_offset", pa.int64()),
        ("message_text", pa.string()),
        ("loader_error", pa.string()),
        ("landed_at", pa.timestamp("us", tz="UTC")),
    ]
)
LANDING_DDL = """
create table if not exists {schema}.{table} (
    message_id string comment 'Unique id of the landed message: format, file hash and position',
    source_file string comment 'Absolute path of the file the message came from',
    source_file_sha256 string comment 'SHA-256 of the file content; a file is landed once',
    message_index bigint comment 'Position of the message in its file, from 0',
    byte_offset bigint comment 'Character offset of the message in the decoded file (record number for Avro)',
    message_text string comment 'The message exactly as received (Avro: its JSON rendering)',
    loader_error string comment 'Why the loader could not decode the message cleanly, else null',
    landed_at timestamp comment 'When the batch was landed (UTC)',
    load_batch_id bigint comment 'Landing batch: microseconds since epoch, increasing',
    source_format string comment 'The --format the file was landed with'
)
using parquet
partitioned by (load_batch_id, source_format)
comment 'Landed CDC messages, one row per message, untouched'
"""
ROWS_PER_ROW_GROUP = 200_000


def project_formats() -> dict[str, dict[str, Any]]:
    """The formats declared in dbt_project.yml (var `cdc_formats`)."""
    project = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text())
    return project["vars"]["cdc_formats"]


def iter_files(paths: Iterable[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw).resolve()
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                hidden = any(part.startswith(".") for part in child.relative_to(path).parts)
                if child.is_file() and not hidden:
                    yield child
        elif path.is_file():
            yield path
        else:
            raise FileNotFoundError(f"no such file or folder: {raw}")


def split_messages(path: Path, data: bytes, carrier: str, settings: dict[str, Any] | None = None) -> Iterator[Message]:
    if carrier == "json":
        return split_json_text(data)
    if carrier == "avro":
        return split_avro(path, data, settings)
    raise ValueError(f"unknown carrier {carrier!r} in dbt_project.yml")


class Landing:
    """The landing table, written as parquet files and registered partition by partition."""

    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection
        self.schema = connection.schema
        self.table = f"{self.schema}.{LANDING_TABLE}"
        connection.sql(f"create database if not exists {self.schema}")
        connection.sql(LANDING_DDL.format(schema=self.schema, table=LANDING_TABLE))
        self.location = self._location()

    def _location(self) -> Path:
        rows = self.connection.sql(f"describe table extended {self.table}")
        for row in rows:
            if row[0] == "Location":
                url = urlparse(row[1])
                if url.scheme not in ("", "file"):
                    raise SystemExit(f"{self.table} is stored at {row[1]}; the loader writes local files only")
                return Path(url.path)
        raise SystemExit(f"cannot find the location of {self.table}")

    def registered_partitions(self) -> set[str]:
        rows = self.connection.sql(f"show partitions {self.table}")
        return {row[0] for row in rows}

    def remove_unregistered(self) -> None:
        """Drop data left by a load that was killed before it registered its batch."""
        registered = self.registered_partitions()
        for pending in self.location.glob(".pending-*"):
            shutil.rmtree(pending, ignore_errors=True)
        for batch_dir in self.location.glob("load_batch_id=*"):
            for format_dir in batch_dir.glob("source_format=*"):
                if f"{batch_dir.name}/{format_dir.name}" not in registered:
                    log.warning("removing unregistered partition %s", format_dir)
                    shutil.rmtree(format_dir, ignore_errors=True)

    def landed_files(self, source_format: str) -> set[str]:
        rows = self.connection.sql(
            f"select distinct source_file_sha256 from {self.table} where source_format = '{source_format}'"
        )
        return {row[0] for row in rows}

    def next_batch_id(self) -> int:
        rows = self.connection.sql(f"select max(load_batch_id) from {self.table}")
        latest = rows[0][0] or 0
        return max(time.time_ns() // 1000, latest + 1)

    def commit(self, pending: Path, batch_id: int, source_format: str) -> None:
        target = self.location / f"load_batch_id={batch_id}" / f"source_format={source_format}"
        target.parent.mkdir(parents=True, exist_ok=True)
        pending.rename(target)
        self.connection.sql(
            f"alter table {self.table} add if not exists partition "
            f"(load_batch_id={batch_id}, source_format='{source_format}')"
        )


class Progress:
    """Logs how far a long load has got, at most every few seconds."""

    def __init__(self, every_seconds: float = 5.0) -> None:
        self.started = time.monotonic()
        self.last = self.started
        self.every = every_seconds
        self.messages = 0
        self.files = 0

    def tick(self, messages: int = 0, files: int = 0, force: bool = False) -> None:
        self.messages += messages
        self.files += files
        now = time.monotonic()
        if force or now - self.last >= self.every:
            self.last = now
            rate = self.messages / max(now - self.started, 1e-9)
            log.info("%d files, %d messages landed (%.0f messages/s)", self.files, self.messages, rate)


def land(
    source_format: str,
    paths: list[str],
    target: str | None = None,
    max_batch_messages: int = 5_000_000,
) -> dict[str, int]:
    formats = project_formats()
    carrier = formats[source_format]["carrier"]
    check_schemas(source_format, formats[source_format])  # a wrong schema path: one line, before Spark starts
    files = list(iter_files(paths))
    connection = connect(target)
    try:
        landing = Landing(connection)
        landing.remove_unregistered()
        already = landing.landed_files(source_format)
        progress = Progress()
        stats = {"files": 0, "files_skipped": 0, "messages": 0, "batches": 0}
        batch = _Batch(landing, source_format)
        for path in files:
            data = read_bytes(path)
            digest = hashlib.sha256(data).hexdigest()
            if digest in already:
                log.info("skipping %s: already landed", path)
                stats["files_skipped"] += 1
                continue
            already.add(digest)
            if batch.messages >= max_batch_messages:
                stats["batches"] += batch.commit()
                batch = _Batch(landing, source_format)
            count = batch.add_file(path, digest, split_messages(path, data, carrier, formats[source_format]), progress)
            stats["files"] += 1
            stats["messages"] += count
            progress.tick(files=1)
        stats["batches"] += batch.commit()
        progress.tick(force=True)
        return stats
    finally:
        connection.close()


class _Batch:
    """One landing batch: rows streamed into a parquet file, registered on commit."""

    def __init__(self, landing: Landing, source_format: str) -> None:
        self.landing = landing
        self.source_format = source_format
        self.batch_id = landing.next_batch_id()
        self.landed_at = time.time_ns() // 1000
        self.pending = landing.location / f".pending-{self.batch_id}-{source_format}"
        self.writer: pq.ParquetWriter | None = None
        self.messages = 0

    def add_file(self, path: Path, digest: str, messages: Iterable[Message], progress: Progress) -> int:
        columns: dict[str, list[Any]] = {name: [] for name in LANDING_COLUMNS.names}
        count = 0
        for message in messages:
            columns["message_id"].append(f"{self.source_format}:{digest[:32]}:{message.index}")
            columns["source_file"].append(str(path))
            columns["source_file_sha256"].append(digest)
            columns["message_index"].append(message.index)
            columns["byte_offset"].append(message.byte_offset)
            columns["message_text"].append(message.text)
            columns["loader_error"].append(message.loader_error)
            columns["landed_at"].append(self.landed_at)
            count += 1
            if len(columns["message_id"]) >= ROWS_PER_ROW_GROUP:
                self._write(columns)
                progress.tick(messages=ROWS_PER_ROW_GROUP)
                columns = {name: [] for name in LANDING_COLUMNS.names}
        remaining = len(columns["message_id"])
        if remaining:
            self._write(columns)
            progress.tick(messages=remaining)
        self.messages += count
        log.info("%s: %d messages", path, count)
        return count

    def _write(self, columns: dict[str, list[Any]]) -> None:
        if self.writer is None:
            self.pending.mkdir(parents=True, exist_ok=True)
            self.writer = pq.ParquetWriter(
                self.pending / "part-00000.snappy.parquet", LANDING_COLUMNS, compression="snappy"
            )
        self.writer.write_table(pa.Table.from_pydict(columns, schema=LANDING_COLUMNS))

    def commit(self) -> int:
        if self.writer is None:
            return 0
        self.writer.close()
        self.landing.commit(self.pending, self.batch_id, self.source_format)
        log.info("batch %d committed: %d messages", self.batch_id, self.messages)
        return 1


def main(argv: list[str] | None = None) -> int:
    formats = project_formats()
    parser = argparse.ArgumentParser(
        description="Land CDC messages, untouched, in the raw_cdc_messages table.",
        epilog="Files already landed (same content) are skipped. Formats are declared "
        "in dbt_project.yml (var cdc_formats).",
    )
    parser.add_argument("--format", required=True, choices=sorted(formats), help="the message format of every PATH")
    parser.add_argument(
        "--target",
        default=None,
        help="dbt target in profiles/profiles.yml (default: the profile's, i.e. CDC_TARGET or local)",
    )
    parser.add_argument(
        "--max-batch-messages",
        type=int,
        default=5_000_000,
        help="start a new landing batch after this many messages (default 5,000,000)",
    )
    parser.add_argument("--quiet", action="store_true", help="log warnings only")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to land")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    try:
        stats = land(args.format, args.paths, args.target, args.max_batch_messages)
    except (FileNotFoundError, PermissionError, IsADirectoryError, AvroSchemaError) as exc:
        log.error("%s", exc)
        return 2
    log.info(
        "done: %(messages)d messages from %(files)d files in %(batches)d batches "
        "(%(files_skipped)d files already landed)",
        stats,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
