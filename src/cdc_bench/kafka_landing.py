"""Benchmark of landing from Kafka: the same messages landed from a topic and from files, against the floor.

    python scripts/bench_kafka.py --events 2000000 --keys 200000    [--partitions 4] [--runs 2]

It generates the bench's stream (`cdc_bench.data`, the full load only), starts a Kafka broker on
loopback (`cdc_testkit.kafka_broker`, with the JVM's default settings), writes every message to a
topic with Spark's Kafka sink (not timed), then measures in one Spark session, `--runs` times in turn:

- **floor**: Spark reads the raw files and writes them once as parquet (as `scripts/bench.py`'s floor);
- **file_load**: `cdc-load` of the files into an empty landing table;
- **kafka_load**: `cdc-load --kafka-topic` of the topic into an empty landing table.

and prints the seconds of each run, the medians and kafka_load/floor (acceptance: at most 1.5) and
kafka_load/file_load. The broker runs on the same two cores as Spark.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from cdc_bench.data import generate
from cdc_dbt_spark.connection import connect
from cdc_dbt_spark.kafka import KafkaSource
from cdc_dbt_spark.loader import land, land_topics
from cdc_dbt_spark.settings import use_project
from cdc_testkit import PROJECT_ROOT
from cdc_testkit.kafka_broker import KafkaBroker

log = logging.getLogger("bench")
LIMIT = 1.5  # kafka_load / floor
TOPIC = "bench.messages"


def main(argv: list[str] | None = None) -> int:
    use_project(PROJECT_ROOT)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="dataworks_json")
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument("--runs", type=int, default=2, help="runs of each step, in turn (default 2)")
    parser.add_argument("--work-dir", type=Path, default=PROJECT_ROOT / "artifacts" / "bench_kafka")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("kafka").setLevel(logging.WARNING)

    work = args.work_dir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ.update(CDC_SPARK_HOME=str(work / "spark"), CDC_TARGET="local", CDC_SCHEMA="bench_files")
    # the bench's stream, full load only (cdc_bench.data's other segments left empty)
    stream = argparse.Namespace(
        format=args.format,
        events=args.events,
        keys=args.keys,
        tables=10,
        delete_share=0.05,
        duplicate_share=0.01,
        out_of_order_share=0.05,
        files=20,
        small_messages=0,
        increments=0,
        seed=1,
    )
    base = generate(stream, work)["base"]
    spark = connect("local").spark

    with KafkaBroker(work / "kafka", java_options=()) as broker:
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic

        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
        admin.create_topics([NewTopic(TOPIC, args.partitions, 1)])
        admin.close()
        started = time.perf_counter()
        messages = spark.read.text(str(work / "base"))
        messages.write.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap_servers).option(
            "topic", TOPIC
        ).save()
        log.info("%d messages produced in %.1f s", base.messages, time.perf_counter() - started)

        def floor() -> None:
            spark.read.text(str(work / "base")).write.mode("overwrite").parquet(str(work / "floor.parquet"))

        def file_load() -> None:
            empty_schema("bench_files")
            land(args.format, [str(work / "base")], "local")

        def kafka_load() -> None:
            empty_schema("bench_kafka")
            landed = land_topics(args.format, KafkaSource((TOPIC,), broker.bootstrap_servers), "local")
            if landed["messages"] != base.messages:
                raise RuntimeError(f"landed {landed['messages']} of {base.messages} messages")

        def empty_schema(schema: str) -> None:
            os.environ["CDC_SCHEMA"] = schema
            spark.sql(f"drop database if exists {schema} cascade")

        steps = {"floor": floor, "file_load": file_load, "kafka_load": kafka_load}
        seconds: dict[str, list[float]] = {name: [] for name in steps}
        for run in range(args.runs):
            for name, step in steps.items():
                started = time.perf_counter()
                step()
                seconds[name].append(time.perf_counter() - started)
                log.info("run %d: %s %.1f s", run + 1, name, seconds[name][-1])

    median = {name: statistics.median(values) for name, values in seconds.items()}
    print(f"\n{base.messages:,} messages, {base.bytes / 1e6:.0f} MB, topic of {args.partitions} partitions")
    for name, values in seconds.items():
        print(f"{name:12s} median {median[name]:7.1f} s   runs: {', '.join(f'{value:.1f}' for value in values)}")
    kafka_floor = median["kafka_load"] / median["floor"]
    print(f"kafka_load/floor      {kafka_floor:.2f}  (limit {LIMIT}: {'met' if kafka_floor <= LIMIT else 'NOT met'})")
    print(f"kafka_load/file_load  {median['kafka_load'] / median['file_load']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
