"""Offsets a Kafka load reads past without landing them: removed records, transaction markers,
tombstones; the ledger that keeps them (`raw_kafka_offsets`).

Spark's Kafka source, like every Kafka consumer, steps over missing offsets without a word. An
offset is missing from the records read for one of two reasons:

- a transaction control record (the commit or abort marker a transactional producer writes;
  under `isolation.level=read_committed` also the aborted records): no change is in it;
- the log cleaner removed the record because a later record has the same key: only on a topic
  whose `cleanup.policy` includes `compact`. Retention and DeleteRecords move a partition's
  start and never remove records inside the log (kafka.partition_ranges checks the start).

A client cannot tell the two apart: the consumer skips control batches and compacted-away
records alike, and no client API names them. So the topic's `cleanup.policy` (read with Kafka's
Admin client in the driver's JVM, the client and settings Spark's source uses) decides:

- not compacted: missing offsets are markers, landed as before, unchecked (no cost);
- compacted (or a policy the client may not read): each landing batch's records are read once,
  kept (persisted) and checked for missing offsets before they are written, so the offsets
  checked are the offsets landed. Offsets missing fail the load, naming topic, partition and
  offsets, unless --skip-removed-offsets accepts them: the batch lands and records them here.

The ledger holds rows per landing batch and partition only where the landing table's offsets do
not tell all. Before the batch's commit, the offsets removed that it accepts (retention or
compaction), in a row that ends where it starts: a load killed before the commit has recorded
them, and moved no resume point (the next load finds the same offsets missing: `cdc_kafka_gaps`
shows a run once). After the commit, where the batch read beyond its last landed record
(tombstones or markers at a partition's end), a row that ends there. A partition's next load
starts at the later of the ends recorded here and the offset after its last landed record: a
load killed between the commit and that row reads the records past its last landed one again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from cdc_dbt_spark.kafka import (
    BROKER_TIMEOUT_SECONDS,
    KafkaSource,
    KafkaSourceError,
    PartitionRange,
    assign_json,
    broker_offsets,
    client_properties,
    java_reason,
    offsets_json,
)

log = logging.getLogger("cdc_load")

LEDGER_TABLE = "raw_kafka_offsets"
LEDGER_DDL = """
create table if not exists {schema}.{table} (
    load_batch_id bigint comment 'The landing batch that read the offsets (raw_cdc_messages.load_batch_id)',
    source_format string comment 'The --format of the load',
    kafka_topic string comment 'Kafka topic',
    kafka_partition int comment 'Partition of the topic',
    first_offset bigint comment 'First offset the batch read',
    end_offset bigint comment 'The offset after the last one the batch read: where the next load starts',
    removed_offsets array<struct<first_offset: bigint, last_offset: bigint, removed_by: string>>
        comment 'Runs of offsets the broker removed before they were landed, accepted with --skip-removed-offsets',
    log_end_offset bigint
        comment 'With removed offsets: the partition end after the read (each removed key has a later record below)',
    recorded_at timestamp comment 'When the row was written (UTC)'
)
using delta
comment 'Kafka offsets read but not landed, per landing batch and partition, where raw_cdc_messages does not tell'
"""
LEDGER_SCHEMA = (
    "load_batch_id bigint, source_format string, kafka_topic string, kafka_partition int, first_offset bigint, "
    "end_offset bigint, removed_offsets array<struct<first_offset: bigint, last_offset: bigint, removed_by: string>>, "
    "log_end_offset bigint"
)
COMPACTED = "compact"  # the cleanup.policy value that removes records inside the log
SHOWN_RUNS = 5  # runs of missing offsets an error or warning names per partition


@dataclass(frozen=True)
class RemovedRun:
    """Offsets `first` to `last` (inclusive) of a partition, removed by the broker before they were landed."""

    first: int
    last: int
    removed_by: str  # retention or compaction

    @property
    def offsets(self) -> int:
        return self.last - self.first + 1

    def __str__(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first} to {self.last}"


Partition = tuple[str, int]


class OffsetLedger:
    """Table `raw_kafka_offsets` beside the landing table: created through the target's SQL,
    appended at its location by the loader's Spark session (as the landing table is)."""

    def __init__(self, connection: Any, spark: Any) -> None:
        self.connection = connection
        self.spark = spark
        self.table = f"{connection.schema}.{LEDGER_TABLE}"
        connection.sql(LEDGER_DDL.format(schema=connection.schema, table=LEDGER_TABLE))  # under the landing lock
        rows = connection.sql(f"describe table extended {self.table}")
        self.location = next(row[1] for row in rows if row[0] == "Location")

    def resume_offsets(
        self, source_format: str, topics: tuple[str, ...], landed: dict[Partition, int]
    ) -> dict[Partition, int]:
        """Per (topic, partition), the offset a load of `source_format` starts at: the later of the
        end recorded here and the offset after the last one landed (`landed`)."""
        wanted = ", ".join(f"'{topic}'" for topic in topics)  # Kafka topic names: [A-Za-z0-9._-]
        rows = self.connection.sql(
            f"select kafka_topic, kafka_partition, max(end_offset) from {self.table} "
            f"where source_format = '{source_format}' and kafka_topic in ({wanted}) group by 1, 2"
        )
        resume = {partition: last + 1 for partition, last in landed.items()}
        for topic, partition, end in rows:
            key = (topic, int(partition))
            resume[key] = max(resume.get(key, 0), int(end))
        return resume

    def record_removed(self, batch_id: int, source_format: str, read: BatchOffsets) -> None:
        """Before landing batch `batch_id` (`read`) commits: its partitions' offsets removed, in
        rows that end where they start (they move no resume point)."""
        rows = []
        for piece in read.batch:
            if runs := read.removed.get(piece.key):
                removed = [(run.first, run.last, run.removed_by) for run in runs]
                end = read.log_ends.get(piece.key)
                rows.append((batch_id, source_format, *piece.key, piece.start, piece.start, removed, end))
        self._append(rows)

    def record_end(self, batch_id: int, source_format: str, read: BatchOffsets) -> None:
        """Once landing batch `batch_id` (`read`) is committed: where it read beyond the last record
        it landed in a partition, a row that ends where the batch ended."""
        self._append(
            [
                (batch_id, source_format, *piece.key, piece.start, piece.end, [], None)
                for piece in read.batch
                if (last := read.last_landed.get(piece.key)) is None or last < piece.end - 1
            ]
        )

    def _append(self, rows: list[tuple]) -> None:
        from pyspark.sql import functions as F  # noqa: N812

        if rows:
            frame = self.spark.createDataFrame(rows, LEDGER_SCHEMA).withColumn("recorded_at", F.current_timestamp())
            frame.coalesce(1).write.format("delta").mode("append").save(self.location)


def compacted_topics(spark: Any, source: KafkaSource, topics: set[str]) -> set[str]:
    """Those of `topics` whose cleanup.policy includes compact (Kafka's Admin client in the
    driver's JVM). A policy the client may not read (no DescribeConfigs right) counts as
    compacted: the load then checks for removed offsets rather than trusting they cannot be."""
    from py4j.protocol import Py4JJavaError

    if not topics:
        return set()
    jvm = spark.sparkContext._jvm
    resource = jvm.org.apache.kafka.common.config.ConfigResource
    topic_type = getattr(jvm.org.apache.kafka.common.config, "ConfigResource$Type").TOPIC
    wanted = jvm.java.util.ArrayList()
    for topic in sorted(topics):
        wanted.add(resource(topic_type, topic))
    admin = jvm.org.apache.kafka.clients.admin.Admin.create(client_properties(jvm, source))
    try:
        seconds = jvm.java.util.concurrent.TimeUnit.SECONDS
        described = admin.describeConfigs(wanted).all().get(BROKER_TIMEOUT_SECONDS, seconds)
        policies = {}
        for entry in described.entrySet():
            setting = entry.getValue().get("cleanup.policy")
            policies[entry.getKey().name()] = None if setting is None else str(setting.value())
    except Py4JJavaError as exc:
        log.warning(
            "cannot read the cleanup.policy of topics %s (%s): their offsets are checked as a compacted topic's",
            ", ".join(sorted(topics)),
            java_reason(exc),
        )
        return set(topics)
    finally:
        admin.close()
    return {topic for topic in topics if compacts(policies.get(topic))}


def compacts(policy: str | None) -> bool:
    """Whether a cleanup.policy ("compact", "delete", "compact,delete"...) compacts; an unknown
    one (None) counts as compacting."""
    return policy is None or COMPACTED in {part.strip() for part in policy.split(",")}


def missing_offsets(spark: Any, records: Any, ranges: list[PartitionRange]) -> dict[Partition, list[RemovedRun]]:
    """The runs of offsets of `ranges` that `records` (Spark's Kafka source read of them) lacks.
    Counts first; only a partition with fewer records than offsets has its offsets ordered."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    counted = records.groupBy("topic", "partition").count().collect()
    counts = {(row["topic"], row["partition"]): row["count"] for row in counted}
    short = [piece for piece in ranges if counts.get((piece.topic, piece.partition), 0) < piece.records]
    if not short:
        return {}
    # the offsets before and after each range bound its first and last runs
    bounds = spark.createDataFrame(
        [(piece.topic, piece.partition, offset) for piece in short for offset in (piece.start - 1, piece.end)],
        "topic string, partition int, offset bigint",
    )
    wanted = F.lit(False)
    for piece in short:
        wanted = wanted | ((F.col("topic") == piece.topic) & (F.col("partition") == piece.partition))
    offsets = records.where(wanted).select("topic", "partition", "offset").unionByName(bounds)
    previous = F.lag("offset").over(Window.partitionBy("topic", "partition").orderBy("offset"))
    runs = (
        offsets.select("topic", "partition", (previous + 1).alias("first"), (F.col("offset") - 1).alias("last"))
        .where(F.col("first") <= F.col("last"))
        .orderBy("topic", "partition", "first")
        .collect()
    )
    missing: dict[Partition, list[RemovedRun]] = {}
    for row in runs:
        missing.setdefault((row["topic"], row["partition"]), []).append(
            RemovedRun(row["first"], row["last"], "compaction")
        )
    return missing


def describe_runs(runs: list[RemovedRun]) -> str:
    """`8 to 10, 15` (and how many more), for an error or a warning."""
    shown = ", ".join(str(run) for run in runs[:SHOWN_RUNS])
    if len(runs) > SHOWN_RUNS:
        more = runs[SHOWN_RUNS:]
        shown += f" and {len(more):,} more runs ({sum(run.offsets for run in more):,} offsets)"
    return shown


class BatchOffsets:
    """The records of a landing batch (`batch`) and what it read of each partition beyond what it
    lands: the offsets removed (retention: `skipped`, from partition_ranges, taken out for the
    batch's partitions; compaction: `check`), and its last landed offset per partition, observed
    while it is written (`metrics`, then `observed`)."""

    def __init__(
        self,
        spark: Any,
        source: KafkaSource,
        batch: list[PartitionRange],
        compacted: set[str],
        skipped: dict[Partition, tuple[int, int]],
    ) -> None:
        self.spark = spark
        self.source = source
        self.batch = batch
        self.compacted = compacted
        self.removed = {
            piece.key: [RemovedRun(*skipped.pop(piece.key), "retention")] for piece in batch if piece.key in skipped
        }
        self.log_ends: dict[Partition, int] = {}  # partitions with compaction's removed offsets: the end after reading
        self.last_landed: dict[Partition, int | None] = {}
        self._records: Any = None

    def records(self) -> Any:
        """The batch's records, as Spark's Kafka source reads them (persisted once checked)."""
        if self._records is None:
            self._records = read_records(self.spark, self.source, self.batch)
        return self._records

    def check(self) -> None:
        """Checks the records of the partitions of compacted topics for missing offsets, keeping
        them (persisted: what was checked is what is written; the cleaner may run meanwhile).
        Fails, naming them, unless the source skips removed offsets; then logs them."""
        checked = [piece for piece in self.batch if piece.topic in self.compacted]
        if not checked:
            return
        from pyspark import StorageLevel

        self._records = self.records().persist(StorageLevel.MEMORY_AND_DISK)
        missing = missing_offsets(self.spark, self._records, checked)
        if not missing:
            return
        lines = [
            f"topic {topic} partition {partition}: offsets {describe_runs(runs)} are missing from the records read"
            for (topic, partition), runs in sorted(missing.items())
        ]
        why = (
            "the topic's cleanup.policy is compact: the log cleaner removed them before they were landed, "
            "or they are transaction markers, which a Kafka client cannot tell apart"
        )
        if not self.source.skip_removed:
            self.release()
            raise KafkaSourceError(
                f"{'; '.join(lines)} ({why}). Land their messages from elsewhere (an export of the topic) if you "
                "have them, then go on with --skip-removed-offsets, which lands the rest and records the offsets "
                "missing (model cdc_kafka_gaps). A topic whose min.compaction.lag.ms is above the time between "
                "two loads keeps every record until it is landed"
            )
        for line in lines:
            log.warning("%s (%s): skipped and recorded (--skip-removed-offsets)", line, why)
        _, ends, _ = broker_offsets(self.spark, self.source)
        self.log_ends = {key: ends[key] for key in missing}
        for key, runs in missing.items():
            self.removed[key] = [*self.removed.get(key, []), *runs]

    def metrics(self) -> list[Any]:
        """Aggregates for an Observation of the read: each partition's last offset with a value."""
        from pyspark.sql import functions as F  # noqa: N812

        return [
            F.max(
                F.when(
                    F.col("value").isNotNull()
                    & (F.col("topic") == piece.topic)
                    & (F.col("partition") == piece.partition),
                    F.col("offset"),
                )
            ).alias(f"last_landed_{number}")
            for number, piece in enumerate(self.batch)
        ]

    def observed(self, values: dict[str, Any]) -> None:
        """The Observation's values, once the batch is written."""
        for number, piece in enumerate(self.batch):
            self.last_landed[piece.topic, piece.partition] = values[f"last_landed_{number}"]
        self.release()

    def release(self) -> None:
        if self._records is not None and self._records.is_cached:
            self._records.unpersist()
        self._records = None


def read_records(spark: Any, source: KafkaSource, ranges: list[PartitionRange]) -> Any:
    """Exactly `ranges`, read with Spark's Kafka source (a DataFrame of its columns)."""
    return (
        spark.read.format("kafka")
        .options(**source.spark_options())
        .option("assign", assign_json(ranges))
        .option("startingOffsets", offsets_json(ranges, end=False))
        .option("endingOffsets", offsets_json(ranges, end=True))
        # offset ranges cut into several tasks a core (by default one task a partition): 3.7M
        # messages in 4 partitions were read in 10.9 s by 4 tasks, 6.1 s by 8, 5.8 s by 16
        .option("minPartitions", str(4 * spark.sparkContext.defaultParallelism))
        .load()
    )
