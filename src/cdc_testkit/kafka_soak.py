"""Soak of continuous ingestion: a runner on Kafka topics, SIGKILLed at random points, loses and
duplicates nothing.

    python scripts/soak_kafka.py                 # 50 kills
    python scripts/soak_kafka.py --kills 10 --max-delay 30

Not part of the test command (about half a minute a kill). A broker on loopback
(`cdc_testkit.kafka_broker`) holds one topic per format (3 partitions); a producer thread sends
each format's random stream (shuffled, a tenth of its messages twice) a few records at a time for
the soak's whole length. Meanwhile `cdc-run --topic ... --every 2` is started, SIGKILLed with its
Spark after a random delay (while it starts, lands or builds), and started again, `--kills` times.
Then the producer stops and one `cdc-run --once` takes what is left. Printed: records produced,
messages landed, landed twice, lost (both must be 0), and whether cdc_current and the version
counts equal the streams replayed in Python; where each kill fell (the runner's last log line).
Exit code 1 if anything was lost, landed twice or differs.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from cdc_testkit import PROJECT_ROOT
from cdc_testkit.faults import project_environment, query
from cdc_testkit.kafka_broker import KafkaBroker
from cdc_testkit.oracle import assert_as_replayed
from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import kafka_records

FORMATS = ("dataworks_json", "debezium_json")
PARTITIONS = 3
BUILD_OPTIONS = ("--", "--exclude-resource-type", "unit_test", "--exclude", "path:models/marts/typed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--max-delay", type=float, default=60.0, help="a kill comes 3 to this many seconds after start")
    parser.add_argument("--events", type=int, default=1500, help="changes per format's stream")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work-dir", type=Path, default=PROJECT_ROOT / "artifacts" / "soak_kafka")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    log = logging.getLogger("soak")
    work = args.work_dir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    rng = random.Random(args.seed)
    changes = {
        source_format: [
            replace(change, database=f"{source_format}_soak")
            for change in Scenario(seed=args.seed + number, tables=3, keys=40, events=args.events).generate()
        ]
        for number, source_format in enumerate(FORMATS)
    }
    records = {}
    for source_format in FORMATS:
        stream = kafka_records(changes[source_format], source_format)
        stream += [record for record in stream if record[1] is not None and rng.random() < 0.1]
        rng.shuffle(stream)
        records[source_format] = stream
    environment = {**project_environment(work, "soak"), "PYTHONUNBUFFERED": "1"}

    with KafkaBroker(work / "kafka") as broker:
        for source_format in FORMATS:
            broker.create_topic(f"soak.{source_format}", PARTITIONS)
        # the records spread over the soak's expected length (the mean delay a kill), a chunk every ~0.5 s
        chunks = max(1, int(args.kills * (3 + args.max_delay) / 2 / 0.5))
        stop = threading.Event()

        def produce() -> None:
            for number in range(chunks):
                for source_format, stream in records.items():
                    part = stream[len(stream) * number // chunks : len(stream) * (number + 1) // chunks]
                    broker.produce(f"soak.{source_format}", part, PARTITIONS)
                if not stop.is_set():  # once the kills are over, the rest goes at once
                    stop.wait(0.5)

        producing = threading.Thread(target=produce)
        producing.start()
        topics = [f"--topic={source_format}=soak.{source_format}" for source_format in FORMATS]
        command = [sys.executable, "-m", "cdc_dbt_spark.runner", *topics, "--bootstrap-servers"]
        command += [broker.bootstrap_servers]
        kill_points: Counter[str] = Counter()
        for number in range(args.kills):
            output = work / f"runner-{number:03d}.log"
            with output.open("w") as handle:
                runner = subprocess.Popen(
                    [*command, "--every", "2", *BUILD_OPTIONS],
                    env=environment,
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    cwd=PROJECT_ROOT,
                    start_new_session=True,
                )
                delay = rng.uniform(3, args.max_delay)
                time.sleep(delay)
                os.killpg(runner.pid, signal.SIGKILL)
                runner.wait()
            point = where_killed(output.read_text())
            kill_points[point] += 1
            log.info("kill %d of %d after %.0f s: %s", number + 1, args.kills, delay, point)
        stop.set()  # whatever is not produced yet is produced now
        producing.join()
        final = subprocess.run(
            [*command, "--once", *BUILD_OPTIONS], env=environment, capture_output=True, text=True, cwd=PROJECT_ROOT
        )
        if final.returncode != 0:
            print(final.stdout[-3000:], final.stderr[-3000:])
            return 1

    landed_query = (
        "select source_format, count(*) as messages, count(distinct kafka_partition, kafka_offset) as records "
        "from {schema}.raw_cdc_messages group by source_format"
    )
    current_query = "select table_id, key_json, to_json(row_image) as image from {schema}.cdc_current"
    versions_query = "select table_id, key_json, count(*) as versions from {schema}.cdc_history group by 1, 2"
    answers = query(environment, landed_query, current_query, versions_query)
    landed = {row["source_format"]: row for row in answers[landed_query]}
    failed = False
    print(f"\n{args.kills} kills: " + ", ".join(f"{count} {point}" for point, count in kill_points.most_common()))
    print(f"{'format':16s} {'produced':>9s} {'landed':>9s} {'twice':>6s} {'lost':>6s}")
    for source_format, stream in records.items():
        produced = sum(value is not None for _, value in stream)
        row = landed.get(source_format, {"messages": 0, "records": 0})
        twice, lost = row["messages"] - row["records"], produced - row["records"]
        failed |= bool(twice or lost)
        print(f"{source_format:16s} {produced:9d} {row['messages']:9d} {twice:6d} {lost:6d}")
    try:
        assert_as_replayed(
            [(row["table_id"], row["key_json"], row["image"]) for row in answers[current_query]],
            [(row["table_id"], row["key_json"], row["versions"]) for row in answers[versions_query]],
            [change for stream in changes.values() for change in stream],
        )
        print("cdc_current and the version counts equal the streams replayed in Python")
    except AssertionError as exc:
        failed = True
        print(f"cdc_current or the version counts differ from the replay: {exc}")
    return 1 if failed else 0


def where_killed(output: str) -> str:
    """Which step a killed runner was in, from its last lines."""
    lines = [line for line in output.splitlines() if line.strip()]
    # (the runner logs "visible in cdc_current" between its two build steps)
    building = ("Running with dbt", "START sql", "START test", "OK created", "PASS ", "visible in cdc_current")
    for line in reversed(lines):
        if any(sign in line for sign in building):
            return "building"
        if "cdc_load" in line:
            return "landing"
        if "cycle " in line:
            return "between cycles"
    return "starting"


if __name__ == "__main__":
    sys.exit(main())
