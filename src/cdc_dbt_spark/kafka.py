"""Kafka topics as a source of the loader: which records a load takes, and the client settings.

A load takes, per partition of each topic, the records from the offset after the last one the
landing table holds for the format (the partition's earliest on a first load) to the partition's
end as the broker reports it when the load starts. Both ends are asked of the broker by a Kafka
consumer in the driver's JVM (Spark's Kafka source brings its client), so the Spark job reads an
exact range (`assign`, `startingOffsets`, `endingOffsets`): records produced while the load runs
are the next load's. The offsets landed are the resume point, written in each landing batch's one
Delta commit (`split_ranges`): a load killed before a commit leaves none of that batch's offsets
behind, and the next load takes the rest of the range again. Offsets read but not landed (a
tombstone or transaction marker at a partition's end, records the broker removed) are kept in a
ledger beside the landing table (`kafka_gaps`), so that they are read once.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("cdc_load")

CLIENT_PREFIX = "kafka."
# settings the loader sets itself (Spark's Kafka source also refuses group.id, deserializers...)
OWN_SETTINGS = ("kafka.bootstrap.servers",)
BROKER_TIMEOUT_SECONDS = 60
_TOPIC_NAME = re.compile(r"^[A-Za-z0-9._-]{1,249}$")  # what Kafka accepts as a topic name
# Client settings from the environment: CDC_KAFKA_SASL_JAAS_CONFIG is kafka.sasl.jaas.config (the
# naming of Kafka's own container images), so that secrets stay out of argv (`ps`, shell history)
ENV_PREFIX = "CDC_KAFKA_"
_PROPERTY = re.compile(r"^(?P<name>[^=:\s]+)\s*[=:]\s*(?P<value>.*)$")  # a properties file's NAME=VALUE


class KafkaSourceError(Exception):
    """A topic the broker does not have, or offsets the landing cannot continue from."""


@dataclass(frozen=True)
class KafkaSource:
    topics: tuple[str, ...]
    bootstrap_servers: str
    # `kafka.`-prefixed client settings (SASL, SSL...), as Spark's Kafka source takes them
    settings: dict[str, str] = field(default_factory=dict)
    # where the broker removed offsets not landed yet: land the rest and record them instead of failing
    skip_removed: bool = False

    def __post_init__(self) -> None:
        for topic in self.topics:
            if not _TOPIC_NAME.match(topic):
                raise ValueError(f"--kafka-topic: {topic!r} is not a Kafka topic name (letters, digits, . _ -)")
        if not self.bootstrap_servers:
            raise ValueError("--kafka-topic needs --bootstrap-servers HOST:PORT[,HOST:PORT...]")

    def spark_options(self) -> dict[str, str]:
        return {**self.settings, "kafka.bootstrap.servers": self.bootstrap_servers}


def parse_topics(text: str) -> tuple[str, ...]:
    return tuple(topic.strip() for topic in text.split(",") if topic.strip())


def add_client_arguments(parser: argparse.ArgumentParser) -> None:
    """--bootstrap-servers, the Kafka client settings and --skip-removed-offsets, as cdc-load and
    cdc-run take them."""
    parser.add_argument(
        "--bootstrap-servers", metavar="HOST:PORT[,HOST:PORT...]", help="the Kafka brokers to ask first"
    )
    parser.add_argument(
        "--kafka-properties",
        metavar="FILE",
        help="a Kafka client properties file (NAME=VALUE lines, as Kafka's own tools take them, e.g. "
        "security.protocol=SASL_SSL, sasl.jaas.config=...): the place for secrets, out of the command line. "
        f"Settings also come from the environment ({ENV_PREFIX}SASL_JAAS_CONFIG is sasl.jaas.config) and "
        "--kafka-setting, each over the one before",
    )
    parser.add_argument(
        "--kafka-setting",
        action="append",
        default=[],
        metavar="kafka.NAME=VALUE",
        help="a Kafka client setting, as Spark's Kafka source takes it (e.g. kafka.security.protocol=SASL_SSL); "
        "repeat for several. Not for secrets: a command line is seen by `ps` and kept in shell history",
    )
    parser.add_argument(
        "--skip-removed-offsets",
        action="store_true",
        help="where the broker removed records before they were landed (retention; the log cleaner of a "
        "compacted topic), land the rest and record the offsets missing in raw_kafka_offsets (model "
        "cdc_kafka_gaps); by default the load fails, naming topic, partition and offsets",
    )


def kafka_source(topics: str, args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> KafkaSource:
    """The source of `topics` (TOPIC[,TOPIC...]) on the brokers and settings `args` and the
    environment give (client_settings); ValueError if wrong."""
    settings = client_settings(args, os.environ if environ is None else environ)
    servers = settings.pop(OWN_SETTINGS[0], "")
    return KafkaSource(parse_topics(topics), args.bootstrap_servers or servers, settings, args.skip_removed_offsets)


def client_settings(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, str]:
    """The Kafka client settings, `kafka.`-prefixed, each source over the one before: the
    --kafka-properties file, the environment's CDC_KAFKA_* variables, --kafka-setting. The
    brokers (bootstrap.servers) may come from the first two; --bootstrap-servers is over both."""
    settings = read_properties(Path(args.kafka_properties)) if args.kafka_properties else {}
    for name, value in sorted(environ.items()):
        if name.startswith(ENV_PREFIX) and len(name) > len(ENV_PREFIX):
            settings[CLIENT_PREFIX + name[len(ENV_PREFIX) :].lower().replace("_", ".")] = value
    for text in args.kafka_setting:
        key, value = parse_client_setting(text)
        settings[key] = value
    return settings


def read_properties(path: Path) -> dict[str, str]:
    """A Kafka client properties file (Java's format: NAME=VALUE or NAME: VALUE, # and ! comments,
    a line ending in a backslash continued on the next), its names `kafka.`-prefixed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--kafka-properties: cannot read {path}: {exc.strerror or exc}") from None
    settings: dict[str, str] = {}
    pending = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        pending = ""
        if not line or line.startswith(("#", "!")):
            continue
        match = _PROPERTY.match(line)
        if not match:
            # the line itself is not repeated: it may hold a secret
            raise ValueError(f"--kafka-properties: {path}, line {number}: expected NAME=VALUE")
        name, value = match.group("name"), match.group("value")
        settings[name if name.startswith(CLIENT_PREFIX) else CLIENT_PREFIX + name] = value
    return settings


def parse_client_setting(text: str) -> tuple[str, str]:
    """`kafka.security.protocol=SASL_SSL` -> its key and value."""
    key, separator, value = text.partition("=")
    if not separator or not key.startswith(CLIENT_PREFIX) or key in OWN_SETTINGS:
        raise ValueError(
            f"--kafka-setting takes kafka.NAME=VALUE (a Kafka client setting, e.g. "
            f"kafka.security.protocol=SASL_SSL; not kafka.bootstrap.servers), not {text!r}"
        )
    return key, value


@dataclass(frozen=True)
class PartitionRange:
    topic: str
    partition: int
    start: int  # the first offset to land
    end: int  # the partition's end when the load started (exclusive)

    @property
    def records(self) -> int:
        return self.end - self.start

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition


def partition_ranges(
    spark: Any, source: KafkaSource, resume: dict[tuple[str, int], int]
) -> tuple[list[PartitionRange], dict[tuple[str, int], tuple[int, int]]]:
    """Per partition of the source's topics, the offsets a load takes: from where the landing
    goes on (`resume`: (topic, partition) -> the next offset to land, kafka_gaps.OffsetLedger) to
    the partition's end; and the offsets skipped per partition (first, last), where retention
    removed them before they were landed and --skip-removed-offsets accepts it. Fails, naming
    topic and partition, where the broker no longer has the next offset to land (retention
    removed it before it was landed) or holds fewer records than were read (the topic was
    re-created). Records the log cleaner removed inside a range: kafka_gaps."""
    from py4j.protocol import Py4JJavaError

    try:
        starts, ends, partitions = broker_offsets(spark, source)
    except Py4JJavaError as exc:  # brokers out of reach, or refusing the client's settings (SASL, SSL)
        raise KafkaSourceError(f"Kafka brokers {source.bootstrap_servers}: {java_reason(exc)}") from None
    ranges, skipped = [], {}
    for topic, partition in partitions:
        earliest, end = starts[topic, partition], ends[topic, partition]
        start = resume.get((topic, partition), earliest)
        if start < earliest:
            lost = (
                f"topic {topic} partition {partition}: the broker starts at offset {earliest}, but the landing "
                f"has read offsets up to {start - 1} only: offsets {start} to {earliest - 1} were removed "
                "(retention) before they were landed"
            )
            if not source.skip_removed:
                raise KafkaSourceError(
                    f"{lost}. Land their messages from elsewhere (an export of the topic) if you have them, "
                    "then go on with --skip-removed-offsets, which records the offsets skipped (model cdc_kafka_gaps)"
                )
            log.warning("%s: skipped and recorded (--skip-removed-offsets)", lost)
            skipped[topic, partition] = (start, earliest - 1)
            start = earliest
        if start > end:
            raise KafkaSourceError(
                f"topic {topic} partition {partition}: the landing has read offsets up to {start - 1}, beyond "
                f"the partition's end ({end}): was the topic deleted and created again?"
            )
        ranges.append(PartitionRange(topic, partition, start, end))
    return ranges, skipped


def split_ranges(ranges: list[PartitionRange], max_records: int) -> list[list[PartitionRange]]:
    """`ranges` cut into landing batches of at most about `max_records` records: batch k takes
    the k-th of n equal slices of every partition's range, so each batch committed moves every
    partition's landed offsets forward and a load stopped between batches resumes after the last."""
    total = sum(piece.records for piece in ranges)
    count = max(1, -(-total // max(1, max_records)))
    batches = []
    for number in range(count):
        batch = []
        for piece in ranges:
            start = piece.start + piece.records * number // count
            end = piece.start + piece.records * (number + 1) // count
            if end > start:
                batch.append(PartitionRange(piece.topic, piece.partition, start, end))
        batches.append(batch)
    return [batch for batch in batches if batch]


def client_properties(jvm: Any, source: KafkaSource) -> Any:
    """The source's client settings as the Java clients take them (java.util.Properties)."""
    properties = jvm.java.util.Properties()
    for key, value in source.spark_options().items():
        properties.setProperty(key[len(CLIENT_PREFIX) :], value)
    return properties


def broker_offsets(
    spark: Any, source: KafkaSource
) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], int], list[tuple[str, int]]]:
    """Each partition's earliest and end offsets, from a consumer in the driver's JVM."""
    jvm = spark.sparkContext._jvm
    properties = client_properties(jvm, source)
    deserializer = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
    properties.setProperty("key.deserializer", deserializer)
    properties.setProperty("value.deserializer", deserializer)
    properties.setProperty("allow.auto.create.topics", "false")  # asking about a topic creates none
    timeout = jvm.java.time.Duration.ofSeconds(BROKER_TIMEOUT_SECONDS)
    consumer = jvm.org.apache.kafka.clients.consumer.KafkaConsumer(properties)
    try:
        listed = consumer.listTopics(timeout)
        partitions = []
        for topic in source.topics:
            infos = listed.get(topic)
            if infos is None or infos.isEmpty():
                raise KafkaSourceError(f"topic {topic} not found on {source.bootstrap_servers}")
            partitions += sorted((topic, info.partition()) for info in infos)
        wanted = jvm.java.util.ArrayList()
        for topic, partition in partitions:
            wanted.add(jvm.org.apache.kafka.common.TopicPartition(topic, partition))
        earliest = consumer.beginningOffsets(wanted, timeout)
        ends = consumer.endOffsets(wanted, timeout)

        def by_partition(offsets: Any) -> dict[tuple[str, int], int]:
            return {
                (entry.getKey().topic(), entry.getKey().partition()): entry.getValue() for entry in offsets.entrySet()
            }

        return by_partition(earliest), by_partition(ends), partitions
    finally:
        consumer.close()


def java_reason(exc: Any) -> str:
    """A Java exception and its causes on one line (the client wraps the reason, e.g. "Failed to
    construct kafka consumer" around the setting it refused)."""
    reasons, cause = [], exc.java_exception
    while cause is not None and len(reasons) < 5:
        reasons.append(" ".join(str(cause.toString()).split()))
        cause = cause.getCause()
    return ": ".join(reasons)


def offsets_json(ranges: list[PartitionRange], end: bool) -> str:
    """`startingOffsets` / `endingOffsets` of Spark's Kafka source for `ranges`."""
    offsets: dict[str, dict[str, int]] = {}
    for piece in ranges:
        offsets.setdefault(piece.topic, {})[str(piece.partition)] = piece.end if end else piece.start
    return json.dumps(offsets)


def assign_json(ranges: list[PartitionRange]) -> str:
    partitions: dict[str, list[int]] = {}
    for piece in ranges:
        partitions.setdefault(piece.topic, []).append(piece.partition)
    return json.dumps(partitions)
