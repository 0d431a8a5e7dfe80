"""Landing from Kafka: a real broker (Apache Kafka, KRaft, in its own JVM on loopback), topics of
several formats produced with a Python client, landed from the offsets already landed, built,
and compared with the scenario replayed in Python, as the file tests do."""

from __future__ import annotations

import logging
import os
import random
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from kafka import KafkaAdminClient
from kafka.structs import TopicPartition

from cdc_dbt_spark import runner
from cdc_dbt_spark.kafka import KafkaSource, KafkaSourceError, PartitionRange, split_ranges
from cdc_dbt_spark.loader import INVALID_UTF8, LANDING_DDL, LANDING_TABLE, land_topics
from cdc_dbt_spark.loader import main as load_main
from cdc_testkit.faults import LOADER, project_environment, query
from cdc_testkit.harness import PROJECT_ROOT
from cdc_testkit.kafka_broker import KafkaBroker
from cdc_testkit.oracle import assert_as_replayed
from cdc_testkit.scenario import Change, Scenario
from cdc_testkit.stream import kafka_records, write_stream

PARTITIONS = 3
# the runner's build here: no unit tests (they read no landed data), no typed tables
BUILD_OPTIONS = ["--", "--exclude-resource-type", "unit_test", "--exclude", "path:models/marts/typed"]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    logging.getLogger("kafka").setLevel(logging.WARNING)  # the Python client's connection chatter
    with KafkaBroker(tmp_path_factory.mktemp("kafka")) as started:
        yield started


def scenario(source_format: str, seed: int) -> list[Change]:
    changes = Scenario(seed=seed, tables=2, keys=12, events=150).generate()
    return [replace(change, database=f"{source_format}_k{seed}") for change in changes]


def shuffled_with_copies(records: list, seed: int) -> list:
    """Out of commit order, and a tenth of the messages sent twice (as a producer's retry does)."""
    rng = random.Random(seed)
    records = records + [record for record in records if record[1] is not None and rng.random() < 0.1]
    rng.shuffle(records)
    return records


def test_topics_of_four_formats_land_once_from_where_they_stopped_and_build(project, broker) -> None:
    """Keyed JSON with heartbeats (DataWorks), tombstones (Debezium), no key (Canal) and binary
    Avro datums (DTS), each on a topic of three partitions, shuffled and with copies: half is
    landed, the rest produced and taken by a runner cycle that builds; what is built is the
    scenario replayed, each record is landed once, and a cycle with nothing new builds nothing."""
    formats = ("dataworks_json", "debezium_json", "canal_json", "dts_avro")
    changes = {source_format: scenario(source_format, seed) for seed, source_format in enumerate(formats, 41)}
    records = {
        source_format: shuffled_with_copies(kafka_records(changes[source_format], source_format), seed)
        for seed, source_format in enumerate(formats, 41)
    }
    for source_format in formats:
        broker.create_topic(f"cdc.{source_format}", PARTITIONS)
        half = len(records[source_format]) // 2
        broker.produce(f"cdc.{source_format}", records[source_format][:half], PARTITIONS)
    project.activate()

    first = {
        source_format: land_topics(source_format, KafkaSource((f"cdc.{source_format}",), broker.bootstrap_servers))
        for source_format in formats
    }
    for source_format in formats:
        broker.produce(f"cdc.{source_format}", records[source_format][len(records[source_format]) // 2 :], PARTITIONS)
    topics = [f"--topic={source_format}=cdc.{source_format}" for source_format in formats]
    cycle = [*topics, f"--bootstrap-servers={broker.bootstrap_servers}", "--once", *BUILD_OPTIONS]
    assert runner.main(cycle) == 0

    current = project.query("select table_id, key_json, to_json(row_image) from {schema}.cdc_current")
    versions = project.query("select table_id, key_json, count(*) from {schema}.cdc_history group by 1, 2")
    assert_as_replayed(current, versions, [change for source_format in formats for change in changes[source_format]])
    landed = dict(
        project.query(
            "select source_format, count(*) from {schema}.raw_cdc_messages "
            "group by source_format having count(*) = count(distinct kafka_topic, kafka_partition, kafka_offset)"
        )
    )
    assert landed == {f: sum(value is not None for _, value in records[f]) for f in formats}  # each once
    first_half = records["debezium_json"][: len(records["debezium_json"]) // 2]
    assert first["debezium_json"]["tombstones"] == sum(value is None for _, value in first_half) > 0
    heartbeats = project.query("select count(*) from {schema}.cdc_heartbeats where source_format = 'dataworks_json'")
    assert heartbeats[0][0] > 0

    commits = len(project.query("describe history {schema}.raw_cdc_messages"))
    assert runner.main(cycle) == 0  # nothing new: no batch, no build
    assert len(project.query("describe history {schema}.raw_cdc_messages")) == commits


def test_a_load_killed_between_its_batches_and_records_produced_while_loading_land_exactly_once(
    broker, tmp_path: Path
) -> None:
    """A loader SIGKILLed while it writes its second batch keeps its first (a commit with its
    offsets) and nothing of the second; the next load goes on from there, records produced while
    it runs are the load after's, and in the end every record is landed once."""
    topic = "cdc.killed"
    broker.create_topic(topic, PARTITIONS)
    records = kafka_records(scenario("dataworks_json", 51), "dataworks_json")
    broker.produce(topic, records, PARTITIONS)
    environment = project_environment(tmp_path, "kafka_kill")
    load = [*LOADER, "--format", "dataworks_json", "--kafka-topic", topic, "--bootstrap-servers"]
    load += [broker.bootstrap_servers, "--max-batch-messages", str(len(records) // 3)]

    killed = subprocess.Popen(
        load, env=environment, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT, start_new_session=True
    )
    output, batches_started = [], 0
    for line in killed.stderr:
        output.append(line)
        batches_started += bool(re.search(r"batch \d+: landing \d+ records", line))
        if batches_started == 2:
            os.killpg(killed.pid, signal.SIGKILL)
            break
    killed.wait()
    assert killed.returncode == -signal.SIGKILL, "".join(output)[-3000:]
    first_batch = int(re.search(r"committed: (\d+) messages", "".join(output)).group(1))
    count = "select count(*) as messages from {schema}.raw_cdc_messages"
    assert query(environment, count)[count] == [{"messages": first_batch}]

    # records go on being produced, a few at a time, while the next load runs: enough for many
    # minutes of producing, so that a load slowed by a busy machine still ends first (the load
    # used to outlast 3,000 events' records while the other worker ran a heavy module)
    more = kafka_records(Scenario(seed=52, tables=2, keys=50, events=60_000).generate(), "dataworks_json")
    with (tmp_path / "load.log").open("w") as log:
        loading = subprocess.Popen(load, env=environment, stderr=log, cwd=PROJECT_ROOT)
        produced = 0
        while loading.poll() is None and produced < len(more):
            broker.produce(topic, more[produced : produced + 10], PARTITIONS)
            produced += 10
            time.sleep(0.1)
        assert loading.wait() == 0, (tmp_path / "load.log").read_text()[-3000:]
    assert produced < len(more), "the load outlasted the records to produce"
    # the rest in one batch: at a few dozen records a batch, the thousands produced during a slow
    # load took minutes of commits
    cap = load.index("--max-batch-messages")
    last = subprocess.run(
        load[:cap] + load[cap + 2 :], env=environment, capture_output=True, text=True, cwd=PROJECT_ROOT
    )
    assert last.returncode == 0, last.stderr[-3000:]
    assert int(re.search(r"done: (\d+) messages", last.stderr).group(1)) > 0  # produced after the load began

    totals = (
        "select count(*) as messages, count(distinct kafka_partition, kafka_offset) as offsets "
        "from {schema}.raw_cdc_messages"
    )
    assert query(environment, totals)[totals] == [
        {"messages": len(records) + produced, "offsets": len(records) + produced}
    ]


def test_kafka_ranges_cut_into_batches_cover_each_offset_once_in_order() -> None:
    ranges = [PartitionRange("t", 0, 0, 100), PartitionRange("t", 1, 50, 60), PartitionRange("u", 0, 7, 7)]
    batches = split_ranges(ranges, 40)
    assert len(batches) == 3 and all(sum(piece.records for piece in batch) <= 40 for batch in batches)
    for topic, partition, start, end in (("t", 0, 0, 100), ("t", 1, 50, 60)):
        pieces = [piece for batch in batches for piece in batch if (piece.topic, piece.partition) == (topic, partition)]
        assert [piece.start for piece in pieces] == [start, *(piece.end for piece in pieces[:-1])]
        assert pieces[-1].end == end
    assert split_ranges(ranges, 1000) == [ranges[:2]]


def test_offsets_the_broker_removed_before_they_were_landed_fail_naming_them_unless_skipped(project, broker) -> None:
    topic = "cdc.aged"
    broker.create_topic(topic, 1)
    records = kafka_records(scenario("dataworks_json", 61), "dataworks_json")
    broker.produce(topic, records[:10], 1)
    project.activate()
    source = KafkaSource((topic,), broker.bootstrap_servers)
    assert land_topics("dataworks_json", source)["messages"] == 10
    broker.produce(topic, records[10:20], 1)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:  # as retention does: the partition now starts at offset 15
        admin.delete_records({TopicPartition(topic, 0): 15})
    finally:
        admin.close()
    with pytest.raises(KafkaSourceError, match=r"topic cdc\.aged partition 0: .* offsets 10 to 14 were removed"):
        land_topics("dataworks_json", source)
    skipping = replace(source, skip_removed=True)
    assert land_topics("dataworks_json", skipping)["messages"] == 5  # offsets 15 to 19
    offsets = project.query("select min(kafka_offset), max(kafka_offset), count(*) from {schema}.raw_cdc_messages")
    assert offsets == [(0, 19, 15)]
    with pytest.raises(KafkaSourceError, match=r"topic cdc\.nope not found on 127\.0\.0\.1:\d+"):
        land_topics("dataworks_json", KafkaSource(("cdc.nope",), broker.bootstrap_servers))


def test_a_value_that_is_not_utf8_lands_with_its_reason(project, broker) -> None:
    broker.create_topic("cdc.bytes", 1)
    broker.produce("cdc.bytes", [(None, b'{"op":"\xff"}'), (None, b'{"op":"ok"}')], 1)
    project.activate()
    assert land_topics("dataworks_json", KafkaSource(("cdc.bytes",), broker.bootstrap_servers))["messages"] == 2
    rows = project.query(
        "select kafka_offset, message_text, loader_error from {schema}.raw_cdc_messages order by kafka_offset"
    )
    assert rows == [(0, '{"op":"\ufffd"}', INVALID_UTF8), (1, '{"op":"ok"}', None)]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--kafka-topic", "t"], "needs --bootstrap-servers"),
        (["--kafka-topic", "t", "--bootstrap-servers", "h:9092", "some/file"], "one of the two"),
        (["--kafka-topic", "bad topic", "--bootstrap-servers", "h:9092"], "is not a Kafka topic name"),
        (["--kafka-topic", "t", "--bootstrap-servers", "h:9092", "--kafka-setting", "group.id=x"], "kafka.NAME=VALUE"),
        (["--format", "datastream_avro", "--kafka-topic", "t", "--bootstrap-servers", "h:9092"], "container files"),
    ],
)
def test_bad_kafka_arguments_are_named(arguments, message, capsys, caplog) -> None:
    arguments = arguments if "--format" in arguments else ["--format", "dataworks_json", *arguments]
    try:
        code = load_main(arguments)
    except SystemExit as exit_:  # argparse's errors
        code = exit_.code
    assert code == 2
    assert message in capsys.readouterr().err + caplog.text  # argparse prints, the loader logs


def test_a_landing_table_made_before_kafka_landing_gets_its_columns(project, tmp_path: Path) -> None:
    """The first load into a landing table without the Kafka columns adds them; its files'
    messages have them null."""
    project.activate()
    old_ddl = LANDING_DDL.replace(",\n    {kafka_columns}", "").format(schema=project.schema, table=LANDING_TABLE)
    project.query(f"create schema if not exists {project.schema}")
    project.query(old_ddl)
    path = write_stream(scenario("dataworks_json", 71), "dataworks_json", tmp_path / "in", seed=71)
    landed = project.land("dataworks_json", *path)["messages"]
    rows = project.query(
        "select count(*), count(kafka_topic), count(kafka_partition), count(kafka_offset) "
        "from {schema}.raw_cdc_messages"
    )
    assert rows == [(landed, 0, 0, 0)] and landed > 0
