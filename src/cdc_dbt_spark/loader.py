"""Land CDC messages, untouched, in the `raw_cdc_messages` table, as a Spark job.

    cdc-load --format dataworks_json PATH [PATH ...]   [--target T] [--vars '{...}']
    cdc-load --format debezium_json --kafka-topic TOPIC[,TOPIC...] --bootstrap-servers HOST:PORT
    python scripts/load_raw.py --format dataworks_json PATH [PATH ...]

Every message of every file (or of every file below a folder) becomes one row holding its
exact text, its format, the file and position it came from, and the landing batch. The work
runs on the target's Spark (`local`: the in-process session dbt uses; `thrift`: a local
session without Hive writes the files, the Thrift server holds the metastore and registers
them; `cluster`: as `thrift`, but the files are written by an application on the cluster's
master, with the target's `spark_conf`); the driver reads no file:

1. Spark tasks stream the files and hash their (decompressed) content. Files are recognised
   by it: a file landed before in this format, or a copy of one earlier in the call, is
   skipped, so re-running a load lands nothing twice. A file that cannot be read is named in
   the log; the others still land.
2. The files are cut into landing batches on file boundaries (`--max-batch-messages`, counted
   from the files' lines or Avro records).
3. Per batch, Spark tasks split the files into messages (`cdc_dbt_spark.tasks`: a file is read
   block by block, in bounded memory; a batch of many messages from fewer files than cores is
   spread over the cores, a file each, for the models' reads) and append them to the landing
   table, a Delta Lake table, in one commit: a batch is visible whole or not at all, and a load
   killed part-way leaves only files no commit names (Delta's VACUUM removes them); the next
   load lands the rest.

From Kafka topics (`--kafka-topic`), a load takes the records beyond the offsets the landing table
holds, up to each partition's end when it starts (`cdc_dbt_spark.kafka`), in batches of at most
`--max-batch-messages` records, each one commit with its offsets: each record's value is one
message, with topic, partition and offset beside it; records without a value (tombstones) are
counted, not landed.

Exit codes: 0 landed (or nothing new to land), 2 bad arguments, unreadable input, a schema file
named in dbt_project.yml that is missing or unreadable, or a topic that cannot be continued
(unknown, or offsets removed by the broker before they were landed).
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdc_dbt_spark.avro import AvroSchemaError, check_schemas
from cdc_dbt_spark.connection import SqlConnection, connect
from cdc_dbt_spark.kafka import (
    KafkaSource,
    KafkaSourceError,
    PartitionRange,
    add_client_arguments,
    kafka_source,
    partition_ranges,
    split_ranges,
)
from cdc_dbt_spark.kafka_gaps import BatchOffsets, OffsetLedger, compacted_topics
from cdc_dbt_spark.locks import LandingLock
from cdc_dbt_spark.settings import (
    SettingsError,
    add_project_arguments,
    parse_vars,
    project_dir,
    project_formats,
    use_project,
)
from cdc_dbt_spark.tasks import (
    DECODED_SCHEMA,
    HASH_SCHEMA,
    RECORD_COLUMNS,
    SPLIT_SCHEMA,
    DecodeAvroRecords,
    FileDigest,
    HashFiles,
    SplitFiles,
    task_files,
)

log = logging.getLogger("cdc_load")

LANDING_TABLE = "raw_cdc_messages"
# where a message came from: a file and its position, or a Kafka record (null for the other kind)
FILE_COLUMNS = {
    "source_file": "string",
    "source_file_sha256": "string",
    "message_index": "bigint",
    "byte_offset": "bigint",
}
KAFKA_COLUMNS = {  # (type, comment): added to a landing table created before them
    "kafka_topic": ("string", "Kafka topic the message came from (null for a file)"),
    "kafka_partition": ("int", "Partition of the Kafka topic (null for a file)"),
    "kafka_offset": ("bigint", "Offset of the record in its partition (null for a file)"),
}
KAFKA_DDL = ", ".join(f"{name} {kind} comment '{comment}'" for name, (kind, comment) in KAFKA_COLUMNS.items())
LANDING_DDL = """
create table if not exists {schema}.{table} (
    message_id string comment 'Message id: format:file-hash:position or format:kafka:topic:partition:offset',
    source_file string comment 'Absolute path of the file the message came from (null for a Kafka record)',
    source_file_sha256 string comment 'SHA-256 of the file content; a file is landed once',
    message_index bigint comment 'Position of the message in its file, from 0',
    byte_offset bigint comment 'Byte offset of the message in the decompressed file (Avro container: record number)',
    message_text string comment 'The message exactly as received (Avro: its JSON rendering)',
    loader_error string comment 'Why the loader could not decode the message cleanly, else null',
    landed_at timestamp comment 'When the batch was landed (UTC)',
    load_batch_id bigint comment 'Landing batch: microseconds since epoch, increasing',
    source_format string comment 'The --format the messages were landed with',
    {kafka_columns}
)
using delta
partitioned by (load_batch_id, source_format)
comment 'Landed CDC messages, one row per message, untouched'
tblproperties (
    -- file statistics for the one column a query prunes by (a load asks for the hashes it
    -- holds): the default, the first 32 columns, would summarise every message's text
    'delta.dataSkippingStatsColumns' = 'source_file_sha256'
)
"""
# Session settings while a batch is written (restored after). Dictionary encoding and min/max
# statistics are most of the cost of writing these columns and buy nothing: ids, positions and
# texts are (nearly) all distinct, and no query prunes on them. Timestamps as int64 microseconds.
_DISTINCT_COLUMNS = ("message_id", "message_index", "byte_offset", "message_text", "kafka_offset")
WRITE_CONF = (
    {f"parquet.enable.dictionary#{column}": "false" for column in _DISTINCT_COLUMNS}
    | {"parquet.column.statistics.enabled#message_text": "false"}
    | {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}
)
PROGRESS_SECONDS = 5.0
# A batch of at least this many messages that fewer tasks than cores split (one big file) is spread
# over the cores before it is written, a file each: the models' reads of the batch then run in as
# many tasks (int_cdc_records parses each message), where one file would be read by one task. Not
# above SPREAD_MAX_BYTES of text: the file's row groups are then split by the readers themselves
# (spark.sql.files.maxPartitionBytes, profiles.yml), and a shuffle of it would cost more.
SPREAD_MESSAGES = 10_000
SPREAD_MAX_BYTES = 256 << 20
# a Kafka record's value that is not UTF-8 (a file's message says at which byte: cdc_dbt_spark.messages)
INVALID_UTF8 = "invalid UTF-8 in the message (the bytes that are not are landed as U+FFFD)"
# How long a loader waits for another loader that is creating the landing table at the same
# moment (Delta refuses a second create while the first one's log folder holds no commit yet).
CREATE_WAIT_SECONDS = 60.0
# what `create table if not exists` fails with while another loader is creating the table
CREATE_RACE_SIGNS = ("DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION", "DELTA_PROTOCOL_CHANGED", "already exists")


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


class TableFiles:
    """File operations in the table's folder, through Hadoop's FileSystem API: they work on
    whatever file system Spark writes the table to."""

    def __init__(self, spark: Any, location: str) -> None:
        self._path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path
        self.root = location.rstrip("/")
        self.fs = self._path(self.root).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def join(self, *names: str) -> str:
        return "/".join([self.root, *names])

    def delete(self, path: str) -> None:
        self.fs.delete(self._path(path), True)


class Landing:
    """The landing table (Delta Lake): metadata through the target's SQL, batches appended to its
    location by the loader's Spark session, the lock file through `TableFiles`."""

    def __init__(self, connection: SqlConnection, spark: Any) -> None:
        self.connection = connection
        self.table = f"{connection.schema}.{LANDING_TABLE}"
        connection.sql(f"create database if not exists {connection.schema}")
        self._create()
        self.location = self._describe()
        self.files = TableFiles(spark, self.location)
        log.info("project %s: landing in %s at %s", project_dir(), self.table, self.location)

    def _create(self) -> None:
        """`create table if not exists`, waiting out a loader that creates the table at this
        moment: Delta then finds the folder written but not yet a table, or both commit the
        table's first version and one loses (DELTA_PROTOCOL_CHANGED), or the metastore has the
        name already. Once that loader is done, the statement is a no-op; a folder that stays
        not empty and not Delta (no loader is creating it) fails after CREATE_WAIT_SECONDS."""
        deadline = time.monotonic() + CREATE_WAIT_SECONDS
        while True:
            try:
                self.connection.sql(
                    LANDING_DDL.format(schema=self.connection.schema, table=LANDING_TABLE, kafka_columns=KAFKA_DDL)
                )
                return
            except Exception as exc:  # PyHive and PySpark raise their own classes
                racing = any(sign in str(exc) for sign in CREATE_RACE_SIGNS)
                if not racing or time.monotonic() > deadline:
                    raise
                log.info("waiting for %s to be created by another loader", self.table)
                time.sleep(1.0)

    def _describe(self) -> str:
        """The table's location; adds the Kafka columns to a landing table created before them."""
        rows = self.connection.sql(f"describe table extended {self.table}")
        if not KAFKA_COLUMNS.keys() <= {row[0] for row in rows}:
            try:
                self.connection.sql(f"alter table {self.table} add columns ({KAFKA_DDL})")
                log.info("added the columns of Kafka records to %s", self.table)
            except Exception as exc:  # PyHive and PySpark raise their own classes
                if "already exists" not in str(exc):  # another loader added them at this moment
                    raise
        for row in rows:
            if row[0] == "Location":
                return row[1]
        raise SystemExit(f"cannot find the location of {self.table}")

    def landed_files(self, source_format: str, hashes: set[str]) -> set[str]:
        """Which of the file hashes `hashes` were landed before in `source_format`. Asking for
        these hashes only lets Delta skip files by their statistics: the cost stays with the
        number of files, not with the messages landed."""
        if not hashes:
            return set()
        wanted = ", ".join(f"'{sha256}'" for sha256 in sorted(hashes))  # hex digests of our own
        rows = self.connection.sql(
            f"select distinct source_file_sha256 from {self.table} "
            f"where source_format = '{source_format}' and source_file_sha256 in ({wanted})"
        )
        return {row[0] for row in rows}

    def landed_offsets(self, source_format: str, topics: tuple[str, ...]) -> dict[tuple[str, int], int]:
        """The last offset landed in `source_format` per (topic, partition) of `topics`."""
        wanted = ", ".join(f"'{topic}'" for topic in topics)  # Kafka topic names: [A-Za-z0-9._-]
        rows = self.connection.sql(
            f"select kafka_topic, kafka_partition, max(kafka_offset) from {self.table} "
            f"where source_format = '{source_format}' and kafka_topic in ({wanted}) group by 1, 2"
        )
        return {(row[0], int(row[1])): int(row[2]) for row in rows}

    def next_batch_id(self) -> int:
        """Microseconds since epoch, above every landed batch. Only a batch at or after the clock
        (a clock set back) can be above it, so the query asks for those alone: a filter on the
        partition column, by which Delta leaves out every file of the table from its log, however
        many batches it holds (the max over all of them took 0.24-0.27 s at 1-6 batches and
        0.31-0.53 s at 40, this query 0.19-0.23 s at 40)."""
        now = time.time_ns() // 1000
        (newest,) = self.connection.sql(f"select max(load_batch_id) from {self.table} where load_batch_id >= {now}")[0]
        return max(now, int(newest or 0) + 1)


@dataclass(frozen=True)
class SourceFile:
    path: str
    sha256: str
    bytes: int  # decompressed
    estimated_messages: int


class Progress:
    """Logs how far a Spark job has got, every few seconds while it runs (status tracker:
    tasks; accumulator: messages of the tasks done)."""

    def __init__(self, spark: Any, what: str, messages: Any = None, every: float = PROGRESS_SECONDS) -> None:
        self.context = spark.sparkContext
        self.what = what
        self.messages = messages
        self.every = every
        self.group = f"cdc-load-{uuid.uuid4().hex[:8]}"
        self.started = time.monotonic()
        self._stop = threading.Event()

    def __enter__(self) -> Progress:
        self.context.setJobGroup(self.group, self.what)
        threading.Thread(target=self._run, name="cdc-load-progress", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.context.setLocalProperty("spark.jobGroup.id", None)
        self.context.setLocalProperty("spark.job.description", None)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.report()
            except Exception:  # progress is best effort: the job itself reports its errors
                log.debug("no progress report", exc_info=True)

    def report(self) -> None:
        tracker = self.context.statusTracker()
        done = running = total = 0
        for job_id in tracker.getJobIdsForGroup(self.group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job else []:
                stage = tracker.getStageInfo(stage_id)
                if stage:
                    done += stage.numCompletedTasks
                    running += stage.numActiveTasks
                    total += stage.numTasks
        messages = f", {self.messages.value:,} messages" if self.messages is not None else ""
        elapsed = time.monotonic() - self.started
        log.info("%s: %d of %d tasks done, %d running%s (%.0f s)", self.what, done, total, running, messages, elapsed)


@contextmanager
def _session_conf(spark: Any, settings: dict[str, str]) -> Iterator[None]:
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _digest(spark: Any, paths: list[str], progress: Progress) -> list[FileDigest]:
    """The digest of each file, by Spark tasks."""
    tasks = task_files([Path(path).stat().st_size for path in paths], spark.sparkContext.defaultParallelism)
    frame = spark.range(0, len(tasks), 1, len(tasks)).mapInArrow(HashFiles(tuple(paths), tasks), HASH_SCHEMA)
    with progress:
        rows = {row.file_no: row for row in frame.collect()}
    return [
        FileDigest(rows[number].sha256, rows[number].bytes, rows[number].estimated_messages, rows[number].error)
        for number in range(len(paths))
    ]


@contextmanager
def _hashing(spark: Any, paths: list[str]) -> Iterator[Callable[[], list[FileDigest]]]:
    """Hashes the files (`_digest`) in a thread of its own while the caller opens the landing
    table (on the embedded target, the metastore's first use: seconds of the JVM's, in which
    the tasks run); yields the wait for the digests. The job is cancelled if the caller fails.
    No files, no job: the wait returns an empty list at once."""
    if not paths:
        yield list
        return
    progress = Progress(spark, f"hashing {len(paths)} files")
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cdc-load-hash") as pool:
        digests = pool.submit(_digest, spark, paths, progress)
        try:
            yield digests.result
        except BaseException:
            spark.sparkContext.cancelJobGroup(progress.group)
            raise


def _batches(files: list[SourceFile], max_batch_messages: int) -> list[list[SourceFile]]:
    """Files in landing batches: a new batch starts once one holds `max_batch_messages`."""
    batches: list[list[SourceFile]] = []
    count = max_batch_messages
    for source in files:
        if count >= max_batch_messages:
            batches.append([])
            count = 0
        batches[-1].append(source)
        count += source.estimated_messages
    return batches


def _write_batch(
    spark: Any,
    files: list[SourceFile],
    location: str,
    batch_id: int,
    source_format: str,
    settings: dict[str, Any],
    what: str,
) -> int:
    """Splits `files` into messages and appends them to the Delta table at `location` as landing
    batch `batch_id`, in one commit; the message count."""
    from pyspark.sql import functions as F  # noqa: N812

    cores = spark.sparkContext.defaultParallelism
    tasks = task_files([source.bytes for source in files], cores)
    messages = spark.sparkContext.accumulator(0)
    split = SplitFiles(tuple(source.path for source in files), tasks, settings["carrier"], settings, progress=messages)
    # what every message of a file shares, joined on by file number (cheaper than per-row in Python)
    sources = spark.createDataFrame(
        [
            (number, source.path, source.sha256, f"{source_format}:{source.sha256[:32]}:")
            for number, source in enumerate(files)
        ],
        "file_no int, source_file string, source_file_sha256 string, id_prefix string",
    )
    split_rows = spark.range(0, len(tasks), 1, len(tasks)).mapInArrow(split, SPLIT_SCHEMA)
    messages_estimated = sum(source.estimated_messages for source in files)
    text_bytes = sum(source.bytes for source in files)
    if len(tasks) < cores and messages_estimated >= SPREAD_MESSAGES and text_bytes <= SPREAD_MAX_BYTES:
        split_rows = split_rows.repartition(cores)
    rows = split_rows.join(F.broadcast(sources), "file_no").select(
        F.concat("id_prefix", F.col("message_index").cast("string")).alias("message_id"),
        *FILE_COLUMNS,
        "message_text",
        "loader_error",
        *(F.lit(None).cast(kind).alias(name) for name, (kind, _) in KAFKA_COLUMNS.items()),
    )
    return _append(spark, rows, location, batch_id, source_format, Progress(spark, what, messages))


def _append(spark: Any, rows: Any, location: str, batch_id: int, source_format: str, progress: Progress) -> int:
    """Appends `rows` (the landing columns but the batch's own) to the Delta table at `location`
    as landing batch `batch_id`, in one commit; the message count."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F  # noqa: N812

    landed_at = time.time_ns() // 1000
    batch = rows.select(
        "*",
        F.timestamp_micros(F.lit(landed_at)).alias("landed_at"),
        F.lit(batch_id).cast("bigint").alias("load_batch_id"),
        F.lit(source_format).alias("source_format"),
    )
    counted = Observation("landed")
    with _session_conf(spark, WRITE_CONF), progress:
        batch.observe(counted, F.count(F.lit(1)).alias("messages")).write.format("delta").mode("append").save(location)
    return int(counted.get["messages"])


def _land_new_files(
    landing: Landing,
    spark: Any,
    source_format: str,
    settings: dict[str, Any],
    files: list[str],
    digests: list[FileDigest],
    max_batch_messages: int,
    stats: dict[str, int],
) -> None:
    """Lands, batch by batch, the files not landed before in `source_format` (the caller holds
    the landing lock); counts them into `stats`."""
    already = landing.landed_files(source_format, {digest.sha256 for digest in digests if digest.sha256})
    new: list[SourceFile] = []
    for path, digest in zip(files, digests, strict=True):
        if digest.sha256 is None:
            log.error("cannot read %s: %s", path, digest.error)
            stats["files_unreadable"] += 1
        elif digest.sha256 in already:
            log.info("skipping %s: already landed", path)
            stats["files_skipped"] += 1
        else:
            already.add(digest.sha256)
            new.append(SourceFile(path, digest.sha256, digest.bytes, digest.estimated_messages))
    batches = _batches(new, max_batch_messages)
    for number, batch in enumerate(batches, 1):
        batch_id = landing.next_batch_id()
        what = f"batch {number} of {len(batches)} ({len(batch)} files)"
        count = _write_batch(spark, batch, landing.location, batch_id, source_format, settings, what)
        log.info("batch %d committed: %d messages from %d files", batch_id, count, len(batch))
        stats["files"] += len(batch)
        stats["messages"] += count
        stats["batches"] += 1


def land(
    source_format: str,
    paths: list[str],
    target: str | None = None,
    max_batch_messages: int = 5_000_000,
    cli_vars: dict[str, Any] | None = None,
) -> dict[str, int]:
    """Lands the messages of `paths` (files or folders); counts of files, files skipped (landed
    before), files that could not be read, messages and batches. `cli_vars`: vars over the
    project's, as dbt's --vars (the format's settings and the profile read them)."""
    # a wrong carrier or schema path: one line, before Spark starts
    settings = check_schemas(source_format, project_formats(cli_vars)[source_format])
    files = [str(path) for path in iter_files(paths)]
    stats = {"files": 0, "files_skipped": 0, "files_unreadable": 0, "messages": 0, "batches": 0}
    connection = connect(target, cli_vars)
    try:
        spark = connection.files_spark()
        with _hashing(spark, files) as digests_of_files:
            landing = Landing(connection, spark)
            # one load at a time per landing table (cdc_dbt_spark.locks)
            with LandingLock(landing.files):
                digests = digests_of_files()
                _land_new_files(landing, spark, source_format, settings, files, digests, max_batch_messages, stats)
        return stats
    finally:
        connection.close()


def land_topics(
    source_format: str,
    source: KafkaSource,
    target: str | None = None,
    cli_vars: dict[str, Any] | None = None,
    max_batch_messages: int = 5_000_000,
) -> dict[str, int]:
    """Lands the records of `source`'s topics that follow the offsets landed in `source_format`,
    up to each partition's end when the load starts, in landing batches of at most about
    `max_batch_messages` records (each one Delta commit that holds its offsets: the offsets
    landed are the next load's start, so a load killed before a commit takes that batch's
    records again, and none twice; offsets read but not landed, and those the broker removed,
    are kept in the ledger raw_kafka_offsets: kafka_gaps). Counts of records, messages,
    tombstones (records without a value: Debezium's after a delete, kept for compaction; no
    change is in them), partitions and batches."""
    settings = project_formats(cli_vars)[source_format]
    if settings["carrier"] == "avro" and not settings.get("avro_schema"):
        raise KafkaSourceError(
            f"--format {source_format} comes as Avro object container files (its settings name no "
            "avro_schema for single datums): it cannot be read from Kafka records"
        )
    settings = check_schemas(source_format, settings)
    stats = {"records": 0, "messages": 0, "tombstones": 0, "batches": 0, "partitions": 0}
    connection = connect(target, cli_vars)
    try:
        spark = connection.files_spark()
        landing = Landing(connection, spark)
        with LandingLock(landing.files):
            ledger = OffsetLedger(connection, spark)
            resume = ledger.resume_offsets(
                source_format, source.topics, landing.landed_offsets(source_format, source.topics)
            )
            ranges, skipped = partition_ranges(spark, source, resume)
            ranges = [piece for piece in ranges if piece.records]
            compacted = compacted_topics(spark, source, {piece.topic for piece in ranges})
            stats["partitions"] = len(ranges)
            batches = split_ranges(ranges, max_batch_messages)
            for number, batch in enumerate(batches, 1):
                batch_id = landing.next_batch_id()
                records = sum(piece.records for piece in batch)
                what = f"batch {number} of {len(batches)} ({records:,} records from {len(batch)} partitions)"
                log.info("batch %d: landing %d records from %d partitions", batch_id, records, len(batch))
                read = BatchOffsets(spark, source, batch, compacted, skipped)
                read.check()
                ledger.record_removed(batch_id, source_format, read)
                messages, tombstones = _write_records(
                    spark, read, landing.location, batch_id, source_format, settings, what
                )
                log.info("batch %d committed: %d messages from %d partitions", batch_id, messages, len(batch))
                ledger.record_end(batch_id, source_format, read)
                stats["records"] += records
                stats["messages"] += messages
                stats["tombstones"] += tombstones
                stats["batches"] += 1
            if skipped:  # partitions retention emptied: nothing to land, the offsets skipped to record
                emptied = [PartitionRange(*key, last + 1, last + 1) for key, (_, last) in skipped.items()]
                read = BatchOffsets(spark, source, emptied, set(), skipped)
                ledger.record_removed(landing.next_batch_id(), source_format, read)
        return stats
    finally:
        connection.close()


def _write_records(
    spark: Any,
    read: BatchOffsets,
    location: str,
    batch_id: int,
    source_format: str,
    settings: dict[str, Any],
    what: str,
) -> tuple[int, int]:
    """Appends each record of `read` (kafka_gaps.BatchOffsets: exactly its ranges, read with
    Spark's Kafka source) with a value as one message (batch `batch_id`, one commit); the counts
    of messages and of tombstones."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F  # noqa: N812

    observed = Observation("read")
    tombstones = F.count(F.when(F.col("value").isNull(), 1)).alias("tombstones")
    kept = read.records().observe(observed, tombstones, *read.metrics()).where(F.col("value").isNotNull())
    messages = None
    if settings["carrier"] == "json":
        # in Spark, not Python: decoding in Python made reading 3.7M messages 2x slower (11.4 s
        # against 5.7 s to Spark's noop sink); checking UTF-8 costs ~2 s of a 11 s Delta write
        text = F.col("value").cast("string")
        decoded = kept.select(
            "topic",
            "partition",
            "offset",
            F.make_valid_utf8(text).alias("message_text"),
            F.when(~F.is_valid_utf8(text), F.lit(INVALID_UTF8)).alias("loader_error"),
        )
    else:
        messages = spark.sparkContext.accumulator(0)
        decoded = kept.select(*RECORD_COLUMNS).mapInArrow(DecodeAvroRecords(settings, messages), DECODED_SCHEMA)
    rows = decoded.select(
        F.concat_ws(":", F.lit(source_format), F.lit("kafka"), "topic", "partition", "offset").alias("message_id"),
        *(F.lit(None).cast(kind).alias(name) for name, kind in FILE_COLUMNS.items()),
        "message_text",
        "loader_error",
        F.col("topic").alias("kafka_topic"),
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
    )
    try:
        count = _append(spark, rows, location, batch_id, source_format, Progress(spark, what, messages))
    finally:
        read.release()
    read.observed(observed.get)
    return count, int(observed.get["tombstones"])


def configure_logging(quiet: bool) -> None:
    """The log of the project's commands (cdc-load, cdc-run): timestamped lines on stderr."""
    logging.basicConfig(
        level=logging.WARNING if quiet else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )


def build_parser(formats: list[str] | None) -> argparse.ArgumentParser:
    """cdc-load's arguments; `formats`: the --format names the project declares (None outside a
    project: --help still works, and says where the formats come from)."""
    parser = argparse.ArgumentParser(
        prog="cdc-load",
        description="Land CDC messages, untouched, in the raw_cdc_messages table, as a Spark job on the "
        "target's Spark. A file may hold JSON lines, a JSON array or concatenated JSON (Avro formats: an "
        "Avro container, or base64 datums one per line), gzip-compressed or not.",
        epilog="Files already landed (same content, same format) are skipped. A file that cannot be read is "
        "named and the others still land (exit code 2). Formats are declared in dbt_project.yml (var "
        "cdc_formats). Exit codes: 0 landed (or nothing new), 2 bad arguments or settings, unreadable input, "
        "or a topic that cannot be continued.",
    )
    parser.add_argument(
        "--format",
        required=True,
        choices=formats,
        metavar="FORMAT",
        help="the message format of every PATH: "
        + (", ".join(formats) if formats else "one the project declares in dbt_project.yml (var cdc_formats)"),
    )
    parser.add_argument(
        "--target",
        default=None,
        help="dbt target in profiles/profiles.yml (default: the profile's, i.e. CDC_TARGET or local)",
    )
    parser.add_argument(
        "--max-batch-messages",
        type=_positive_int,
        default=5_000_000,
        help="start a new landing batch, at a file boundary, once a batch holds this many messages as "
        "counted from the files' lines (Avro containers: records); Kafka: records (default 5,000,000)",
    )
    parser.add_argument(
        "--vars",
        default=None,
        help="vars over dbt_project.yml's, as dbt's --vars: a YAML or JSON mapping, e.g. "
        "'{cdc_formats: {...}}' (give the same to dbt build)",
    )
    parser.add_argument("--quiet", action="store_true", help="log warnings only")
    kafka = parser.add_argument_group(
        "Kafka", "instead of PATHs: land what the topics hold beyond the offsets landed, up to their end now"
    )
    kafka.add_argument("--kafka-topic", metavar="TOPIC[,TOPIC...]", help="topics of messages in --format")
    add_client_arguments(kafka)
    add_project_arguments(parser)
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to land")
    return parser


def _positive_int(text: str) -> int:
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"takes a whole number above 0, not {text}")
    return number


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # the project and --vars first: they declare the formats that --format accepts
    vars_parser = argparse.ArgumentParser(add_help=False)
    vars_parser.add_argument("--vars", default=None)
    vars_parser.add_argument("--quiet", action="store_true")
    add_project_arguments(vars_parser)
    early, _ = vars_parser.parse_known_args(argv)
    # logging before the settings: resolving them imports dbt, which configures the root logger
    # (at WARNING) when nothing has
    configure_logging(early.quiet)
    try:
        use_project(early.project_dir, early.profiles_dir)
        cli_vars = parse_vars(early.vars)
        formats = project_formats(cli_vars)
    except SettingsError as exc:
        if {"-h", "--help"} & set(argv):  # the help needs no project
            build_parser(None).parse_args(argv)
        print(f"cdc-load: error: {exc}", file=sys.stderr)
        return 2
    parser = build_parser(sorted(formats))
    args = parser.parse_args(argv)
    if bool(args.paths) == bool(args.kafka_topic):
        parser.error(
            "give PATHs to land files, or --kafka-topic (with --bootstrap-servers) to land topics: one of the two"
        )
    try:
        if args.kafka_topic:
            try:
                source = kafka_source(args.kafka_topic, args)
            except ValueError as exc:
                parser.error(str(exc))
            stats = land_topics(args.format, source, args.target, cli_vars, args.max_batch_messages)
        else:
            stats = land(args.format, args.paths, args.target, args.max_batch_messages, cli_vars)
    except (
        SettingsError,
        KafkaSourceError,
        AvroSchemaError,
        FileNotFoundError,
        PermissionError,
        IsADirectoryError,
    ) as exc:
        # what a user can get wrong (a target, a setting, a path, a topic): one line, no traceback
        log.error("%s", exc)
        return 2
    except SystemExit as exc:
        if not isinstance(exc.code, str):  # argparse's errors, printed already
            raise
        log.error("%s", exc.code)  # a target's service out of reach, a setting it lacks: one line
        return 2
    if args.kafka_topic:
        log.info(
            "done: %(messages)d messages from %(records)d records of %(partitions)d partitions in %(batches)d "
            "batches (%(tombstones)d tombstones, records without a value, not landed)",
            stats,
        )
        return 0
    log.info(
        "done: %(messages)d messages from %(files)d files in %(batches)d batches "
        "(%(files_skipped)d files already landed, %(files_unreadable)d unreadable)",
        stats,
    )
    return 2 if stats["files_unreadable"] else 0


if __name__ == "__main__":
    sys.exit(main())
