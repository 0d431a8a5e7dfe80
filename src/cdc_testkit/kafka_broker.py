"""A single-node Kafka broker (KRaft: broker and controller in one JVM) on loopback, for the tests.

    python -m cdc_testkit.kafka_broker     (the test command runs it: resolves the jars once)

Apache Kafka's own server (`org.apache.kafka:kafka_2.13`) and its dependencies come from Maven
Central through Ivy, the resolver Spark itself uses (its jar is in PySpark's Spark), with Spark's
Ivy cache; they are copied into the venv's `kafka-broker/`, apart from Spark's jars (the broker's Scala
and Jackson are not Spark's). The broker runs in its own JVM with its data in a folder of the test's.
"""

from __future__ import annotations

import base64
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import TracebackType

from cdc_testkit import TEST_JVM_OPTIONS

log = logging.getLogger("kafka_broker")

BROKER = ("org.apache.kafka", "kafka_2.13", "4.1.1")
JARS = Path(sys.prefix) / "kafka-broker"  # in the venv, beside what the set-up resolved
STAMP = JARS / "resolved.txt"  # the coordinate the folder holds
START_SECONDS = 60.0
# a small heap and the kit's JVM options: in the tests the broker shares two cores with Spark
# (the bench gives it the JVM's defaults)
BROKER_TEST_JAVA_OPTIONS = ("-Xmx512m", *TEST_JVM_OPTIONS.split())


def ivy_home() -> Path:
    """Spark's Ivy folder (its default since Spark 4, or CDC_IVY_HOME as the set-up takes it)."""
    return Path(os.environ.get("CDC_IVY_HOME") or Path.home() / ".ivy2.5.2")


def broker_jars() -> Path:
    """The folder of the broker's jars, resolved from Maven Central on first use."""
    coordinate = ":".join(BROKER)
    if STAMP.is_file() and STAMP.read_text().strip() == coordinate:
        return JARS
    from cdc_dbt_spark.spark_jars import spark_jars_dir

    ivy_jar = next(spark_jars_dir().glob("ivy-*.jar"))
    for jar in JARS.glob("*.jar"):
        jar.unlink()
    JARS.mkdir(parents=True, exist_ok=True)
    log.info("resolving %s (Maven Central, through Ivy)", coordinate)
    command = ["java", "-jar", str(ivy_jar), "-dependency", *BROKER, "-confs", "default"]
    command += ["-cache", str(ivy_home() / "cache")]
    command += ["-retrieve", str(JARS / "[organisation]_[artifact]-[revision](-[classifier]).[ext]")]
    resolved = subprocess.run(command, capture_output=True, text=True)
    if resolved.returncode != 0:
        raise RuntimeError(f"resolving {coordinate} failed:\n{resolved.stdout[-3000:]}{resolved.stderr[-3000:]}")
    STAMP.write_text(coordinate + "\n")
    return JARS


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class KafkaBroker:
    """`with KafkaBroker(folder) as broker:` a broker at `broker.bootstrap_servers` until the block ends."""

    def __init__(self, folder: Path, java_options: tuple[str, ...] = BROKER_TEST_JAVA_OPTIONS) -> None:
        self.folder = folder
        self.java_options = java_options
        self.port, self.controller_port = free_port(), free_port()
        self.bootstrap_servers = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self._producer = None  # one client for every produce() call (kafka-python's is thread-safe)

    def _java(self, main_class: str, *arguments: str) -> list[str]:
        return ["java", *self.java_options, "-cp", f"{broker_jars()}/*", main_class, *arguments]

    def __enter__(self) -> KafkaBroker:
        shutil.rmtree(self.folder / "data", ignore_errors=True)  # a new broker: no topic, no offset
        self.folder.mkdir(parents=True, exist_ok=True)
        properties = self.folder / "server.properties"
        properties.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    "node.id=1",
                    f"controller.quorum.bootstrap.servers=127.0.0.1:{self.controller_port}",
                    f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
                    "controller.listener.names=CONTROLLER",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    f"log.dirs={self.folder / 'data'}",
                    "offsets.topic.replication.factor=1",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "auto.create.topics.enable=false",
                    "group.initial.rebalance.delay.ms=0",
                    # the log cleaner looks for compacted topics' work every 0.2 s, not 15 s: a test
                    # waits for it to remove records (a topic sets its own segment.ms and dirty ratio)
                    "log.cleaner.backoff.ms=200",
                ]
            )
            + "\n"
        )
        # as `kafka-storage random-uuid` makes one; given as --cluster-id=ID: an id may start with '-'
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        formatted = subprocess.run(
            self._java(
                "kafka.tools.StorageTool", "format", "--standalone", f"--cluster-id={cluster_id}", "-c", str(properties)
            ),
            capture_output=True,
            text=True,
        )
        if formatted.returncode != 0:
            raise RuntimeError(f"formatting the broker's storage failed:\n{formatted.stdout}{formatted.stderr}")
        with (self.folder / "broker.log").open("w") as output:
            self.process = subprocess.Popen(
                self._java("kafka.Kafka", str(properties)), stdout=output, stderr=subprocess.STDOUT
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        client_log = logging.getLogger("kafka")
        level = client_log.level
        client_log.setLevel(logging.CRITICAL)  # "connection refused" until the broker listens
        try:
            self._poll_until_ready()
        finally:
            client_log.setLevel(level)

    def _poll_until_ready(self) -> None:
        from kafka import KafkaAdminClient
        from kafka.errors import KafkaError

        deadline = time.monotonic() + START_SECONDS
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the broker exited ({self.process.returncode}): see {self.folder / 'broker.log'}")
            try:
                KafkaAdminClient(bootstrap_servers=self.bootstrap_servers).close()
                return
            except KafkaError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def create_topic(self, topic: str, partitions: int, configs: dict[str, str] | None = None) -> None:
        """`configs`: the topic's own settings (cleanup.policy=compact, segment.ms...)."""
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        try:
            admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=configs or {})])
        finally:
            admin.close()

    def produce(self, topic: str, records: list[tuple[bytes | None, bytes | None]], partitions: int) -> None:
        """(key, value) records, each to the partition its number says (Kafka orders only within a partition)."""
        if self._producer is None:
            from kafka import KafkaProducer

            self._producer = KafkaProducer(bootstrap_servers=self.bootstrap_servers)
        for number, (key, value) in enumerate(records):
            self._producer.send(topic, key=key, value=value, partition=number % partitions)
        self._producer.flush()

    def stop(self) -> None:
        if self._producer is not None:
            self._producer.close()
            self._producer = None
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __exit__(self, kind: type | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        self.stop()


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    log.info("broker jars in %s", broker_jars())
    return 0


if __name__ == "__main__":
    sys.exit(main())
