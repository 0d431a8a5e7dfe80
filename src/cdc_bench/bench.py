"""Benchmark: what a full build, an incremental and a small run cost, against the floor and two anchors.

    python scripts/bench.py --events 2000000 --keys 200000

Steps, on the same data and Spark settings (the local target), in one run:
  1. floor         Spark reads the raw files and writes them once as parquet
  2. hand_written  the one-job SCD2 a Spark user would write instead (cdc_bench.hand_written), in the same
                   session, from the raw files to written history and current tables (dataworks_json only)
  3. full          load_raw.py + dbt build from empty
  4. landed_hand_written  the hand-written job again, over the landed messages instead of the raw files; with
                   the full load's seconds, `bound`: what full would cost if the build did no more than that job
  5. landed_one_pass  the same job plus the least of the contract no build can leave out (typed images, copies
                   dropped, one change per position, an events table written before history); with the full
                   load's seconds, `one_pass_bound`: the least full can cost while doing what the contract asks
  6. incremental   land a further 1% of events, then dbt build
     hand_merge    the same 1% merged into the hand-written job's history (a Delta table) by the SCD2 MERGE of
                   Delta's documentation (cdc_bench.hand_written.merge_dataworks_json): the anchor for increments
  7. anchor        Spark's own Auto CDC (pyspark.pipelines.create_auto_cdc_flow, SCD type 2)
                   over the same canonical events, if it can run here (else: why not)
  8. increments    --increments small runs (--small-messages each) in a row in this process, as a runner does
                   them (land, dbt build), the seconds of each; then cdc_history's file count and the time of a
                   full scan of cdc_current, before and after `dbt run-operation cdc_maintain`
     schema_change  --schema-changes pairs of small increments in the same process with one bench table
                   typed: one without a schema change, one that adds a column to the table; the seconds of
                   each and the ratio of their medians (cdc_bench.steps.schema_changes)
  9. small         land --small-messages more messages and dbt build, as a user runs them: two
                   commands, each its own process and JVM (after the bench's own Spark is stopped)
 10. user_increment  a further 1% of events landed and built as a user runs them (two processes)
     *_hand_merge  after each of 9 and 10, its anchor: the same messages merged by hand (hand_merge's MERGE)
                   into the hand-written history, as its own process and JVM (cdc_bench.hand_merge_process)
With Spark in the bench's process (target local), every dbt build's SQL statements and Spark jobs are counted
(cdc_bench.spark_work) and printed for the full build, the incremental one and a small one (the median of the
increments): the fixed cost of a build, which later work must not add to unseen.
Prints a table and writes a JSON report (events, bytes, seconds, events/s, peak driver memory,
full/floor, full/hand_written, bound/floor, bound/hand_written, one_pass_bound/floor,
one_pass_bound/hand_written, incremental/full, incremental/hand_merge, user_increment/full,
small/small_hand_merge, user_increment/user_increment_hand_merge, ours/anchor,
schema_change with/without, small against its limit). Not part of the test suite.

    python scripts/bench.py --target cluster --events 2000000 --keys 200000

runs the same steps on a running cluster (make cluster): floor, hand_written and the loads run as one
application on its master (reading the shared metastore), dbt builds on its Thrift server, schema `bench`
(dropped first). Peak driver memory is then the Thrift server's, where dbt's SQL is planned.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from cdc_bench.data import EVOLVING_TABLE, generate, schema_folders
from cdc_bench.hand_written import ONE_PASS
from cdc_bench.report import publish
from cdc_bench.steps import (
    BUILD,
    SMALL_LIMIT_S,
    DriverMemory,
    Step,
    anchor_auto_cdc,
    hand_merge,
    hand_merge_process,
    hand_written,
    increments,
    run_dbt,
    schema_changes,
    thrift_server_pid,
    typed_image_sql,
    user_run,
)
from cdc_dbt_spark.connection import cluster_conf, cluster_spark, connect, end_spark
from cdc_dbt_spark.loader import LANDING_TABLE, land
from cdc_dbt_spark.settings import use_project
from cdc_testkit import PROJECT_ROOT
from cdc_testkit.encoders import CONTAINER_FORMATS, ENCODERS

log = logging.getLogger("bench")


def spark_work(by_name: dict[str, Step]) -> dict[str, dict]:
    """Statements and jobs of the full build, the incremental one and a small one (the median of the
    increments, which are small runs built in this process), where they were counted."""
    found = {
        "full": by_name["full"].parts.get("spark"),
        "incremental": by_name["incremental"].parts.get("spark"),
        "small (median of increments)": by_name["increments"].parts.get("spark_median")
        if "increments" in by_name
        else None,
    }
    return {name: work for name, work in found.items() if work}


def main(argv: list[str] | None = None) -> int:
    use_project(PROJECT_ROOT)  # the checkout this tool measures
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="dataworks_json", choices=sorted(set(ENCODERS) - CONTAINER_FORMATS))
    parser.add_argument("--events", type=int, default=2_000_000, help="source changes in the full load")
    parser.add_argument("--keys", type=int, default=200_000, help="distinct keys over all tables")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--delete-share", type=float, default=0.05, help="share of changes that delete a row")
    parser.add_argument("--duplicate-share", type=float, default=0.01, help="share of messages sent twice")
    parser.add_argument(
        "--out-of-order-share",
        type=float,
        default=0.05,
        help="share of messages displaced (swapped within blocks of 100,000 changes)",
    )
    parser.add_argument("--files", type=int, default=20, help="files the full load is written into")
    parser.add_argument(
        "--small-messages", type=int, default=1000, help="messages of the small run (after the incremental one)"
    )
    parser.add_argument(
        "--increments",
        type=int,
        default=100,
        help="small increments (of --small-messages each) run in a row in the bench's process (default 100)",
    )
    parser.add_argument(
        "--schema-changes",
        type=int,
        default=3,
        help="pairs of small increments without and with a schema change of one table (default 3; 0: none)",
    )
    parser.add_argument(
        "--target",
        choices=["local", "cluster"],
        default="local",
        help="local: the embedded default (a warehouse of its own in the work dir); cluster: a running "
        "cluster (make cluster), schema bench dropped first",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work-dir", type=Path, default=PROJECT_ROOT / "artifacts" / "bench")
    parser.add_argument("--report", type=Path, default=None, help="JSON report path (default: in work dir)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    # absolute: connect() moves to the project root, and the small run's commands run there
    work = args.work_dir.resolve()
    report_path = args.report.resolve() if args.report else work / "bench.json"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # the warehouse every step uses, in this process and in the small run's commands
    bench_env = {"CDC_SCHEMA": "bench", "CDC_TARGET": args.target}
    if args.target == "local":
        bench_env["CDC_SPARK_HOME"] = str(work / "spark")
    os.environ.update(bench_env)
    if args.target == "cluster":
        connection = connect("cluster")  # before generating: the cluster is up
        connection.sql("drop database if exists bench cascade")
        connection.close()
    files = generate(args, work)
    base, extra = files["base"], files["extra"]

    if args.target == "local":
        memory = DriverMemory()
        spark = connect("local").spark
    else:
        # one application on the cluster for floor, hand_written and the loads; dbt's SQL is planned in
        # the Thrift server's driver, whose memory is measured
        memory = DriverMemory(thrift_server_pid())
        spark = cluster_spark(cluster_conf(), hive=True)
    steps: list[Step] = []

    memory.reset()
    started = time.perf_counter()
    spark.read.text(str(work / "base")).write.mode("overwrite").parquet(str(work / "floor.parquet"))
    steps.append(Step("floor", base.changes, base.bytes, time.perf_counter() - started, memory.peak_mb()))

    steps.append(
        hand_written(
            spark,
            "hand_written",
            args.format,
            lambda: spark.read.text(str(work / "base")),
            base,
            work / "hand_written",
            memory,
        )
    )

    memory.reset()
    started = time.perf_counter()
    land(args.format, [str(work / "base")], args.target)
    loaded = time.perf_counter()
    build = run_dbt(*BUILD)
    finished = time.perf_counter()
    peak = memory.peak_mb()
    written = {
        f"{table}_rows": spark.sql(f"select count(*) from bench.cdc_{table}").first()[0]
        for table in ("history", "current")
    }
    steps.append(
        Step(
            "full",
            base.changes,
            base.bytes,
            finished - started,
            peak,
            parts={"load_s": round(loaded - started, 1), "build_s": round(finished - loaded, 1), **build, **written},
        )
    )

    def landed_messages() -> Any:
        return spark.table(f"bench.{LANDING_TABLE}").selectExpr("message_text as value")

    # the least any build over the landing table does: the hand-written job reading the landed messages
    # instead of the raw files; with the load, a lower bound of full that no dedupe, test or dbt overhead is in
    steps.append(
        hand_written(
            spark,
            "landed_hand_written",
            args.format,
            landed_messages,
            base,
            work / "landed_hand_written",
            memory,
        )
    )

    # the same, plus the least of the contract no design of the build can leave out (typed images, copies
    # dropped, one change per position, an events table): with the load, `one_pass_bound`
    one_pass = dict(ONE_PASS)
    if args.format in one_pass:
        one_pass[args.format] = functools.partial(one_pass[args.format], typed_image=typed_image_sql(args.format))
    steps.append(
        hand_written(
            spark,
            "landed_one_pass",
            args.format,
            landed_messages,
            base,
            work / "landed_one_pass",
            memory,
            jobs=one_pass,
        )
    )

    memory.reset()
    started = time.perf_counter()
    land(args.format, [str(work / "extra")], args.target)
    loaded = time.perf_counter()
    build = run_dbt(*BUILD)
    finished = time.perf_counter()
    steps.append(
        Step(
            "incremental",
            extra.changes,
            extra.bytes,
            finished - started,
            memory.peak_mb(),
            parts={"load_s": round(loaded - started, 1), "build_s": round(finished - loaded, 1), **build},
        )
    )

    # the same increment by the SCD2 MERGE a Spark user writes from Delta's documentation
    steps.append(
        hand_merge(
            spark,
            args.format,
            lambda: spark.read.text(str(work / "base")),
            lambda: spark.read.text(str(work / "extra")),
            extra,
            work / "hand_merge",
            memory,
        )
    )

    memory.reset()
    steps.append(anchor_auto_cdc(spark, "bench", work))
    if args.increments:
        folders = [work / "increments" / f"{number:03d}" for number in range(args.increments)]
        steps.append(increments(spark, args.format, folders, "bench"))
    if args.schema_changes:
        folders = [work / name for name in schema_folders(args.schema_changes)]
        steps.append(schema_changes(args.format, folders, f"shop.{EVOLVING_TABLE}"))

    # last: the small run's commands open the metastore themselves (local) or need the cluster's cores
    # (cluster), so this process must let go of its Spark first
    end_spark(spark)
    environment = {**os.environ, **bench_env}
    # each beside its anchor: the same messages merged by hand into the hand-written history, as its own process
    hand_history = work / "hand_merge" / "history"
    for name in ("small", "user_increment"):
        steps.append(user_run(name, args.format, files[name], work / name, work, environment))
        steps.append(
            hand_merge_process(
                f"{name}_hand_merge", args.format, files[name], hand_history, work / name, work, environment
            )
        )

    by_name = {step.name: step for step in steps}

    def ratio(numerator: str | float, denominator: str) -> float | None:
        """A step's seconds (or given seconds) over another step's; none where either did not run."""
        above = by_name[numerator].seconds if isinstance(numerator, str) else numerator
        below = by_name[denominator].seconds
        return above / below if above and below else None

    def after_full_load(step: str) -> float:
        """The full load's seconds + a job over the landed messages; 0 where the job did not run."""
        seconds = by_name[step].seconds
        return by_name["full"].parts["load_s"] + seconds if seconds else 0.0

    # what full would take at no cost of its own, and the least it can take doing what the contract asks
    bound = after_full_load("landed_hand_written")
    one_pass_bound = after_full_load("landed_one_pass")
    ratios = {
        "full/floor": ratio("full", "floor"),
        "full/hand_written": ratio("full", "hand_written"),
        "bound/floor": ratio(bound, "floor"),
        "bound/hand_written": ratio(bound, "hand_written"),
        "one_pass_bound/floor": ratio(one_pass_bound, "floor"),
        "one_pass_bound/hand_written": ratio(one_pass_bound, "hand_written"),
        "incremental/full": ratio("incremental", "full"),
        "incremental/hand_merge": ratio("incremental", "hand_merge"),
        "user_increment/full": ratio("user_increment", "full"),
        "small/small_hand_merge": ratio("small", "small_hand_merge"),
        "user_increment/user_increment_hand_merge": ratio("user_increment", "user_increment_hand_merge"),
        "ours/anchor": ratio("full", "anchor"),
        "schema_change with/without": by_name["schema_change"].parts["with/without"] if args.schema_changes else None,
    }
    small_seconds = by_name["small"].seconds
    acceptance = {"small_s": round(small_seconds, 1), "limit_s": SMALL_LIMIT_S, "met": small_seconds <= SMALL_LIMIT_S}
    print(f"\n{'step':19s} {'events':>10s} {'MB':>8s} {'seconds':>9s} {'events/s':>10s} {'peak MB':>8s}  note")
    for step in steps:
        parts = {
            name: value
            for name, value in step.parts.items()
            if name not in ("slowest_s", "seconds_each", "spark", "spark_median")
        }
        # the small run's JVMs are other processes: their memory is not measured
        peak = f"{step.peak_driver_mb:8.0f}" if step.peak_driver_mb else f"{'-':>8s}"
        print(
            f"{step.name:19s} {step.events:10d} {step.bytes / 1e6:8.1f} {step.seconds:9.1f} "
            f"{step.events_per_second:10.0f} {peak}  {step.note or parts or ''}"
        )
    for step in steps:
        if "slowest_s" in step.parts:
            print(f"slowest in {step.name}: {step.parts['slowest_s']}")
    # what each kind of build ran in Spark (statements dbt sent, Spark jobs), counted in this process
    counted_work = spark_work(by_name)
    for name, work in counted_work.items():
        print(f"spark work of {name}: {work['statements']} statements, {work['jobs']} jobs; {work['heaviest_nodes']}")
    # the small build's statements node by node, each with the jobs it ran: where a cut has to come from
    small_work = counted_work.get("small (median of increments)", {})
    for node, statements in small_work.get("statements_by_node", {}).items():
        print(f"  {node or '(before and after the nodes)'}: {'; '.join(statements)}")
    for name, value in ratios.items():
        print(f"{name:28s} {value:.3f}" if value is not None else f"{name:28s} n/a")
    print(
        f"{'small':28s} {small_seconds:.1f} s for {by_name['small'].parts['messages']} messages "
        f"(limit {SMALL_LIMIT_S:.0f} s: {'met' if acceptance['met'] else 'NOT met'})"
    )
    report = {
        "target": args.target,
        "format": args.format,
        "events": args.events,
        "keys": args.keys,
        "steps": [dict(step.__dict__, events_per_second=step.events_per_second) for step in steps],
        "ratios": ratios,
        "spark_work": counted_work,
        "acceptance": acceptance,
    }
    report_path.write_text(json.dumps(report, indent=2))
    print(f"\nreport: {report_path}")
    publish(report)  # docs/benchmarks: the results with machine, versions and commit, and the chart
    return 0


if __name__ == "__main__":
    sys.exit(main())
