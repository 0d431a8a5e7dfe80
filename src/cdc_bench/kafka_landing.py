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

Then, with `--latency-cycles N` (default 20; 0: none): the topic's landing is built in full (`dbt
build`), this process ends its Spark, and `cdc-run --topic ... --every 5` runs over that warehouse
as its own process. Once it idles, `--small-messages` further messages of the stream (1,000 by
default) are produced, and the seconds until a cycle logs them visible in `cdc_current` (the
first step of its build done, see `cdc_dbt_spark.runner`) are their latency; N times. It prints
each, the median (acceptance: at most 15 s), the 95th percentile (at most 30 s) and the median
seconds to the end of the cycle's whole build.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cdc_bench.data import default_stream, generate
from cdc_bench.runner_cycles import TimedCycle, percentile_95, timed_cycles
from cdc_bench.steps import BUILD, run_dbt
from cdc_dbt_spark.connection import connect, end_spark
from cdc_dbt_spark.kafka import KafkaSource
from cdc_dbt_spark.loader import land, land_topics
from cdc_dbt_spark.settings import use_project
from cdc_testkit import PROJECT_ROOT
from cdc_testkit.kafka_broker import KafkaBroker

log = logging.getLogger("bench")
LIMIT = 1.5  # kafka_load / floor
TOPIC = "bench.messages"


def runner_latencies(
    source_format: str, broker: KafkaBroker, partitions: int, folders: list[Path], work: Path
) -> tuple[list[float], list[float]]:
    """Seconds from producing each folder's messages to the runner's log that they are visible in
    cdc_current (its build's first step done), and to the end of that cycle's build."""

    def producer(folder: Path) -> Callable[[], int]:
        def produce() -> int:
            records = [(None, line.rstrip(b"\n")) for path in sorted(folder.iterdir()) for line in path.open("rb")]
            broker.produce(TOPIC, records, partitions)
            return len(records)

        return produce

    def progress(number: int, cycle: TimedCycle) -> None:
        log.info(
            "cycle %d of %d: visible after %.1f s, built after %.1f s", number, len(folders), cycle.visible, cycle.built
        )

    arguments = [f"--topic={source_format}={TOPIC}", f"--bootstrap-servers={broker.bootstrap_servers}", "--every", "5"]
    cycles = timed_cycles(
        [*arguments, "--", *BUILD[1:]],
        [producer(folder) for folder in folders],
        work / "runner.log",
        dict(os.environ),
        progress,
    )
    return [cycle.visible for cycle in cycles], [cycle.built for cycle in cycles]


def main(argv: list[str] | None = None) -> int:
    use_project(PROJECT_ROOT)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="dataworks_json")
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument("--runs", type=int, default=2, help="runs of each step, in turn (default 2)")
    parser.add_argument("--latency-cycles", type=int, default=20, help="runner cycles timed (default 20; 0: none)")
    parser.add_argument("--small-messages", type=int, default=1000, help="messages produced per timed cycle")
    parser.add_argument("--work-dir", type=Path, default=PROJECT_ROOT / "artifacts" / "bench_kafka")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("kafka").setLevel(logging.WARNING)

    work = args.work_dir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ.update(CDC_SPARK_HOME=str(work / "spark"), CDC_TARGET="local", CDC_SCHEMA="bench_files")
    # the bench's stream, full load only (cdc_bench.data's other segments left empty)
    stream = default_stream(args.format, args.events, args.keys, args.small_messages, args.latency_cycles)
    base = generate(stream, work)["base"]
    spark = connect("local").spark

    with KafkaBroker(work / "kafka", java_options=()) as broker:
        broker.create_topic(TOPIC, args.partitions)
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
        latencies, builds = [], []
        if args.latency_cycles:
            run_dbt(*BUILD)  # the topic's landing (bench_kafka), built in full
            end_spark(spark)  # the runner opens the embedded metastore itself
            folders = [work / "increments" / f"{number:03d}" for number in range(args.latency_cycles)]
            latencies, builds = runner_latencies(args.format, broker, args.partitions, folders, work)

    median = {name: statistics.median(values) for name, values in seconds.items()}
    print(f"\n{base.messages:,} messages, {base.bytes / 1e6:.0f} MB, topic of {args.partitions} partitions")
    for name, values in seconds.items():
        print(f"{name:12s} median {median[name]:7.1f} s   runs: {', '.join(f'{value:.1f}' for value in values)}")
    if latencies:
        p95 = percentile_95(latencies)
        print(f"latency      median {statistics.median(latencies):7.1f} s   95th percentile {p95:.1f} s")
        print(f"             cycles: {', '.join(f'{value:.1f}' for value in latencies)}")
        print(f"built        median {statistics.median(builds):7.1f} s   (the cycle's whole build, tests included)")
    kafka_floor = median["kafka_load"] / median["floor"]
    print(f"kafka_load/floor      {kafka_floor:.2f}  (limit {LIMIT}: {'met' if kafka_floor <= LIMIT else 'NOT met'})")
    print(f"kafka_load/file_load  {median['kafka_load'] / median['file_load']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
