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
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.structs import TopicPartition

from cdc_dbt_spark import runner
from cdc_dbt_spark.kafka import KafkaSource, KafkaSourceError, PartitionRange, split_ranges
from cdc_dbt_spark.kafka_gaps import RemovedRun, compacts, describe_runs
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


@pytest.mark.kafka
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


@pytest.mark.kafka
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


def test_which_cleanup_policies_compact_and_how_missing_offsets_are_named() -> None:
    policies = ("compact", "delete", "compact,delete", "delete, compact", "", None)
    assert [compacts(policy) for policy in policies] == [True, False, True, True, False, True]  # None: unknown
    runs = [RemovedRun(10 * number, 10 * number + number % 2, "compaction") for number in range(7)]
    assert describe_runs(runs) == "0, 10 to 11, 20, 30 to 31, 40 and 2 more runs (3 offsets)"


@pytest.mark.kafka
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
    # retention removed every record not landed: nothing to land, the offsets skipped still recorded
    broker.produce(topic, records[20:25], 1)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    try:
        admin.delete_records({TopicPartition(topic, 0): 25})
    finally:
        admin.close()
    with pytest.raises(KafkaSourceError, match=r"offsets 20 to 24 were removed"):
        land_topics("dataworks_json", source)
    assert land_topics("dataworks_json", skipping)["batches"] == 0
    assert land_topics("dataworks_json", source)["batches"] == 0  # recorded: the next load goes on
    skipped = project.query(
        "select first_offset, end_offset, to_json(removed_offsets) from {schema}.raw_kafka_offsets order by 1"
    )
    assert skipped == [
        (15, 15, '[{"first_offset":10,"last_offset":14,"removed_by":"retention"}]'),
        (25, 25, '[{"first_offset":20,"last_offset":24,"removed_by":"retention"}]'),
    ]
    with pytest.raises(KafkaSourceError, match=r"topic cdc\.nope not found on 127\.0\.0\.1:\d+"):
        land_topics("dataworks_json", KafkaSource(("cdc.nope",), broker.bootstrap_servers))


def versions(*keys: int) -> list[Change]:
    """Debezium changes of rows `keys` in that order: each key's first change inserts it
    (version 1), every later one updates it (version 2, 3...)."""
    changes, seen = [], {}
    for sequence, key in enumerate(keys, 1):
        version = seen[key] = seen.get(key, 0) + 1
        row = {"id": key, "name": f"v{version}"}
        before = {"id": key, "name": f"v{version - 1}"} if version > 1 else None
        kind = "update" if before else "insert"
        changes.append(Change(kind, "inv", "items", sequence, 1_700_000_000_000 + sequence, before=before, after=row))
    return changes


def wait_until_removed(broker: KafkaBroker, topic: str, offsets: set[int]) -> None:
    """Until the log cleaner has removed `offsets` from the topic's partition 0 (60 s at most)."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, enable_auto_commit=False)
    partition = TopicPartition(topic, 0)
    consumer.assign([partition])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            consumer.seek_to_beginning(partition)
            read = {record.offset for batch in consumer.poll(timeout_ms=2000).values() for record in batch}
            if read and not read & offsets:
                return
            time.sleep(0.5)
        raise AssertionError(f"the log cleaner did not remove offsets {sorted(offsets)} of {topic} in 60 s")
    finally:
        consumer.close()


@pytest.mark.kafka
def test_records_the_log_cleaner_removed_before_they_were_landed_fail_naming_them_unless_accepted(
    project, broker, caplog
) -> None:
    """The issue's case: offsets 0-7 landed, then k5 v1, k5 v2, k6 v1, k5 v3, k6 v2, k7 v1 produced
    to a compacted topic, whose cleaner removes the first three before the next load. That load
    exits 2 naming topic, partition and offsets; with --skip-removed-offsets it lands the rest and
    records the gap, which model cdc_kafka_gaps and a warning test show with the keys that may
    lack versions; the next load takes nothing again."""
    topic = "cdc.compacted"
    # segments roll after 100 ms, and a segment is cleaned as soon as 1% of it is superseded
    compacted = {"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01"}
    broker.create_topic(topic, 1, compacted)
    records = kafka_records(versions(1, 2, 3, 4, 1, 2, 3, 4, 5, 5, 6, 5, 6, 7, 8), "debezium_json")
    broker.produce(topic, records[:8], 1)
    project.activate()
    load = ["--format", "debezium_json", "--kafka-topic", topic, "--bootstrap-servers", broker.bootstrap_servers]
    assert load_main(load) == 0
    broker.produce(topic, records[8:14], 1)
    time.sleep(0.2)  # past segment.ms: the next record rolls the segment, and the cleaner may take 8-13
    broker.produce(topic, records[14:], 1)
    wait_until_removed(broker, topic, {8, 9, 10})

    caplog.clear()
    assert load_main(load) == 2
    assert "topic cdc.compacted partition 0: offsets 8 to 10 are missing from the records read" in caplog.text
    assert "--skip-removed-offsets" in caplog.text
    assert project.query("select count(*) from {schema}.raw_cdc_messages") == [(8,)]  # nothing of the batch

    assert load_main([*load, "--skip-removed-offsets"]) == 0
    landed = project.query("select kafka_offset from {schema}.raw_cdc_messages order by kafka_offset")
    assert [offset for (offset,) in landed] == [0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 14]
    ledger = project.query(
        "select first_offset, end_offset, to_json(removed_offsets), log_end_offset from {schema}.raw_kafka_offsets"
    )
    # recorded before the batch's commit, moving no resume point (a row from 8 to 8)
    assert ledger == [(8, 8, '[{"first_offset":8,"last_offset":10,"removed_by":"compaction"}]', 15)]
    commits = len(project.query("describe history {schema}.raw_cdc_messages"))
    assert load_main(load) == 0  # the gap is behind: nothing new, nothing fails
    assert len(project.query("describe history {schema}.raw_cdc_messages")) == commits

    test = "assert_no_versions_removed_before_landing"
    # the test and what it reads, without the data tests of those models (indirect selection)
    result = project.dbt("build", "--select", f"+{test}", "--indirect-selection", "empty")
    warned = [outcome for outcome in result.result if outcome.node.name == test]
    assert [(outcome.status, outcome.failures) for outcome in warned] == [("warn", 4)]  # keys 5 to 8
    gaps = project.query(
        "select kafka_topic, kafka_partition, first_offset, last_offset, offsets_missing, removed_by "
        "from {schema}.cdc_kafka_gaps"
    )
    assert gaps == [(topic, 0, 8, 10, 3, "compaction")]


@pytest.mark.kafka
def test_transaction_markers_and_a_tombstone_at_a_partition_end_are_read_once(project, broker) -> None:
    """A transactional producer's commit markers (one offset each, no record) land without an
    error, and the next load does not read the marker at the end again; nor a tombstone at the
    end (Debezium's after a delete): counted once, and the next load takes nothing."""
    transactional, tombstoned = "cdc.transactional", "cdc.tombstoned"
    broker.create_topic(transactional, 1)
    records = kafka_records(versions(1, 2, 1, 3, 2), "debezium_json")
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, transactional_id="cdc-test")
    try:
        producer.init_transactions()
        for transaction in (records[:3], records[3:]):
            producer.begin_transaction()
            for key, value in transaction:
                producer.send(transactional, key=key, value=value, partition=0)
            producer.commit_transaction()
    finally:
        producer.close()
    broker.create_topic(tombstoned, 1)
    deleted = Change("delete", "inv", "items", 9, 1_700_000_000_009, before={"id": 1, "name": "v2"})
    broker.produce(tombstoned, kafka_records([*versions(1, 1), deleted], "debezium_json"), 1)
    project.activate()

    marked = KafkaSource((transactional,), broker.bootstrap_servers)
    first = land_topics("debezium_json", marked)  # offsets 0-2, a marker at 3, 4-5, a marker at 6
    assert (first["records"], first["messages"]) == (7, 5)
    ended = KafkaSource((tombstoned,), broker.bootstrap_servers)
    assert land_topics("debezium_json", ended)["tombstones"] == 1
    commits = len(project.query("describe history {schema}.raw_cdc_messages"))
    for source in (marked, ended):
        again = land_topics("debezium_json", source)
        assert (again["records"], again["tombstones"], again["batches"]) == (0, 0, 0)
    assert len(project.query("describe history {schema}.raw_cdc_messages")) == commits
    ends = project.query(
        "select kafka_topic, end_offset, size(removed_offsets) from {schema}.raw_kafka_offsets order by 1"
    )
    assert ends == [(tombstoned, 4, 0), (transactional, 7, 0)]


@pytest.mark.kafka
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
