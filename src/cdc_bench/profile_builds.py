"""Profile small incremental builds on a saved warehouse: what each build, node and statement costs.

    python scripts/profile_builds.py --events 2000000 --keys 200000 --builds 8
    python scripts/profile_builds.py --builds 9 --alternate CDC_ADAPTIVE=true,false,false,true --statements

The first run generates the bench's messages (cdc_bench.data, DataWorks JSON: --events over --keys, then
small increments of --small-messages each), lands the base, builds it whole and saves the warehouse (Spark
home and metastore) under --work-dir. Every run then starts from a copy of that saved warehouse, so runs are
comparable, and in one process lands and builds the increments one by one (`dbt build`, unit tests left
out), as a runner's cycles do. Printed per build: land and build seconds, Spark SQL statements and jobs
(cdc_bench.spark_work); per node: seconds and each statement with its jobs; with --statements, each
statement's seconds (sent to its results fetched) and the seconds Spark's analyzer and optimizer rules took
in it (Catalyst's RuleExecutor: planning, Delta's file listing for a scan included); with --jobs, the build's
Spark jobs by kind (cdc_bench.spark_work.job_kind: Delta's file filtering and snapshots, a MERGE's phases, the
statements' own), each kind's count and seconds.

--alternate NAME=V1,V2 sets environment variable NAME to V1 for the 1st, 3rd... build and V2 for the 2nd,
4th..., the way to compare two settings on a machine whose speed drifts: each build of one setting has a build
of the other beside it. The profile (profiles.yml) reads CDC_* variables when dbt starts an invocation, so a
setting it takes from one (CDC_ADAPTIVE, CDC_SHUFFLE_PARTITIONS, CDC_EXPRESSION_CODEGEN...) changes from one
build to the next in the same Spark. The stream has a heartbeat every 1,000 changes, so increments of 1,000
messages hold one in about every other build (cdc_heartbeats and its test then run too): give two values as
V1,V2,V2,V1 and each setting builds as many of each kind. The summary gives each setting's median build and
jobs, the first build (the JVM's coldest) left out.

--runner times the builds as a user's warm runner runs them instead: `cdc-run --every 1` as its own process over
the copy of the warehouse (cdc_bench.runner_cycles), each increment's file moved into the runner's folder once
the cycle before has built. Printed per cycle: the seconds from the move to the runner's line that the messages
are visible in cdc_current, to the end of the cycle's build, and the runner's compaction of cdc_history when it
ran; then the median and 95th percentile of both (the first cycle, the JVM's coldest, left out), the last
cycle against the 10th (and the median of the last ten against that of cycles 6-15), and cdc_history's files
after each of its commits. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cdc_bench.runner_cycles import TimedCycle, percentile_95, timed_cycles
from cdc_bench.spark_work import counted
from cdc_bench.steps import BUILD
from cdc_dbt_spark.settings import use_project
from cdc_testkit import PROJECT_ROOT

SCHEMA = "bench"
SOURCE_FORMAT = "dataworks_json"
_RULES_TOTAL = re.compile(r"Total time: ([0-9.]+) seconds")


def alternation(text: str) -> tuple[str, list[str]]:
    name, separator, values = text.partition("=")
    if not separator or "," not in values:
        raise argparse.ArgumentTypeError(f"--alternate takes NAME=V1,V2[,...], not {text!r}")
    return name, values.split(",")


def prepare(args: argparse.Namespace, work: Path) -> None:
    """The messages, and the warehouse with the base landed and built whole (saved by the caller once this
    process has ended: the metastore's files are whole then)."""
    from cdc_bench.data import default_stream, generate
    from cdc_bench.steps import run_dbt
    from cdc_dbt_spark.connection import connect
    from cdc_dbt_spark.loader import land

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    generate(default_stream(SOURCE_FORMAT, args.events, args.keys, args.small_messages, args.builds), work)
    connect("local")
    started = time.perf_counter()
    land(SOURCE_FORMAT, [str(work / "base")])
    work_done = run_dbt(*BUILD).get("spark", {})
    print(
        f"base: {args.events} events landed and built in {time.perf_counter() - started:.1f} s, "
        f"{work_done.get('statements')} statements, {work_done.get('jobs')} jobs"
    )


@contextmanager
def timed_statements(spark: Any) -> Iterator[list[tuple[str, float, float]]]:
    """(statement, seconds from sent to its results fetched, seconds of Catalyst rules) of each statement dbt
    sends inside the block, filled as they run."""
    from dbt.adapters.spark import session

    rules = spark._jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor
    timings: list[tuple[str, float, float]] = []
    current: dict[str, Any] = {}
    execute, fetchall = session.Cursor.execute, session.Cursor.fetchall

    def close_current() -> None:
        if current:
            spent = _RULES_TOTAL.search(rules.dumpTimeSpent())
            timings.append((current["sql"], current["seconds"], float(spent.group(1)) if spent else 0.0))
            current.clear()

    def timed_execute(cursor: Any, sql: str, *parameters: Any) -> Any:
        close_current()
        rules.resetMetrics()
        started = time.perf_counter()
        try:
            return execute(cursor, sql, *parameters)
        finally:
            current.update(sql=" ".join(sql.split()), seconds=time.perf_counter() - started)

    def timed_fetchall(cursor: Any) -> Any:
        started = time.perf_counter()
        try:
            return fetchall(cursor)
        finally:
            if current:
                current["seconds"] += time.perf_counter() - started

    session.Cursor.execute, session.Cursor.fetchall = timed_execute, timed_fetchall
    try:
        yield timings
    finally:
        close_current()
        session.Cursor.execute, session.Cursor.fetchall = execute, fetchall


def statement_label(sql: str) -> str:
    """A statement without dbt's query comment: the node that sent it (or dbt's connection), its first words."""
    found = re.search(r'"(?:node_id|connection_name)": "([^"]+)"', sql)
    sender = found.group(1) if found else "?"
    # a node id is resource.project.name (a test's with a hash after it); a connection name has no dots
    parts = sender.split(".")
    name = parts[2] if len(parts) >= 3 else sender
    text = re.sub(r"^/\*.*?\*/\s*", "", sql)
    return f"{name[:60]}: {text[:100]}"


def runner_profile(args: argparse.Namespace, work: Path) -> None:
    """--runner: the increments as cycles of a warm `cdc-run` of its own, then cdc_history's files."""
    from cdc_dbt_spark.connection import connect

    shutil.rmtree(work / "spark", ignore_errors=True)
    shutil.copytree(work / "saved", work / "spark")
    inbox = work / "runner_folder"
    shutil.rmtree(inbox, ignore_errors=True)
    inbox.mkdir()

    def mover(number: int) -> Callable[[], int]:
        def move() -> int:
            messages = 0
            for path in sorted((work / "increments" / f"{number:03d}").iterdir()):
                # copied under a hidden name, then renamed: the runner lands whole files only
                hidden = inbox / f".{number:03d}-{path.name}"
                text = path.read_bytes()
                hidden.write_bytes(text)
                messages += len(text.splitlines())  # JSON lines: a message a line
                hidden.rename(inbox / f"{number:03d}-{path.name}")
            return messages

        return move

    def progress(number: int, cycle: TimedCycle) -> None:
        print(f"== cycle {number}: visible after {cycle.visible:.1f} s, built after {cycle.built:.1f} s", flush=True)

    started = time.time()
    cycles = timed_cycles(
        [f"--source={SOURCE_FORMAT}={inbox}", "--every", "1", "--", *BUILD[1:]],
        [mover(number) for number in range(args.builds)],
        work / "runner.log",
        dict(os.environ),
        progress,
    )
    compactions = [(number, cycle.compacted) for number, cycle in enumerate(cycles, 1) if cycle.compacted is not None]
    warm = cycles[1:] or cycles
    visible, built = [cycle.visible for cycle in warm], [cycle.built for cycle in warm]
    print(f"== summary ({len(warm)} cycles after the first; runner log {work / 'runner.log'})")
    print(f"  visible: median {statistics.median(visible):.1f} s, 95th percentile {percentile_95(visible):.1f} s")
    print(f"  built:   median {statistics.median(built):.1f} s, 95th percentile {percentile_95(built):.1f} s")
    print(f"  cdc_history compacted after cycles {', '.join(f'{n} ({s:.1f} s)' for n, s in compactions) or 'none'}")
    if len(cycles) >= 10:
        last, tenth = cycles[-1].built, cycles[9].built
        print(f"  cycle {len(cycles)} / cycle 10 (built): {last:.1f} / {tenth:.1f} s = {last / tenth:.2f}")
    if len(cycles) >= 25:
        early = statistics.median(cycle.built for cycle in cycles[5:15])
        late = statistics.median(cycle.built for cycle in cycles[-10:])
        print(f"  median of the last 10 / of cycles 6-15 (built): {late:.1f} / {early:.1f} s = {late / early:.2f}")
    run_files = [(operation, count) for at, operation, count in history_files(connect("local").spark) if at >= started]
    if run_files:
        print(
            f"  cdc_history's files after each commit of the run (max {max(count for _, count in run_files)}): "
            + ", ".join(f"{count}{'' if operation == 'MERGE' else f' ({operation})'}" for operation, count in run_files)
        )


def history_files(spark: Any) -> list[tuple[float, str, int]]:
    """(time, operation, data files) of each commit of cdc_history, oldest first: the files a reader of that
    version reads (a snapshot's file list, one Spark job each)."""
    commits = spark.sql(f"describe history {SCHEMA}.cdc_history").select("version", "timestamp", "operation").collect()
    location = spark.sql(f"describe detail {SCHEMA}.cdc_history").select("location").first()[0]
    return [
        (
            commit.timestamp.timestamp(),
            commit.operation,
            len(spark.read.format("delta").option("versionAsOf", commit.version).load(location).inputFiles()),
        )
        for commit in sorted(commits, key=lambda commit: commit.version)
    ]


def profile(args: argparse.Namespace, work: Path, alternate: list[tuple[str, list[str]]]) -> None:
    from dbt.cli.main import dbtRunner

    from cdc_dbt_spark.connection import connect
    from cdc_dbt_spark.loader import land

    shutil.rmtree(work / "spark", ignore_errors=True)
    shutil.copytree(work / "saved", work / "spark")
    spark = connect("local").spark
    by_setting: dict[str, list[tuple[float, int]]] = {}
    for number in range(args.builds):
        folder = work / "increments" / f"{number:03d}"
        setting = []
        for name, values in alternate:
            os.environ[name] = values[number % len(values)]
            setting.append(f"{name}={os.environ[name]}")
        started = time.perf_counter()
        messages = land(SOURCE_FORMAT, [str(folder)])["messages"]
        landed = time.perf_counter() - started
        started = time.perf_counter()
        with counted(spark, job_kinds=args.jobs) as (work_done, node_results), timed_statements(spark) as statements:
            result = dbtRunner().invoke(
                ["--log-level", "warn", *BUILD, "--profiles-dir", "profiles", "--project-dir", str(PROJECT_ROOT)]
            )
            node_results.extend(result.result or [])
        built = time.perf_counter() - started
        if not result.success:
            raise SystemExit(f"build {number + 1} failed; see logs/dbt.log")
        label = " ".join(setting) or "as configured"
        print(
            f"== build {number + 1} ({label}): {messages} messages landed in {landed:.1f} s, built in {built:.1f} s: "
            f"{work_done.statements} statements, {work_done.jobs} jobs"
        )
        seconds = {node.node.name: node.execution_time for node in result.result}
        for node, sent in work_done.node_statements.items():
            print(f"  {seconds.get(node, 0.0):5.1f} s  {node or '(outside nodes)'}: {'; '.join(sent)}")
        if args.statements:
            for sql, spent, rules_spent in statements:
                print(f"    {spent:6.2f} s (rules {rules_spent:5.2f} s)  {statement_label(sql)}")
        if args.jobs:
            for kind, (count, seconds) in work_done.job_kinds.items():
                print(f"  {count:4d} jobs {seconds:6.2f} s  {kind}")
        if number:  # the first build is the JVM's coldest
            by_setting.setdefault(label, []).append((built, work_done.jobs))
    print("== summary (builds after the first)")
    for label, builds in by_setting.items():
        seconds = [built for built, _ in builds]
        jobs = [count for _, count in builds]
        print(
            f"  {label}: {len(builds)} builds, median {statistics.median(seconds):.1f} s "
            f"(each: {', '.join(f'{built:.1f}' for built in seconds)}), median {statistics.median(jobs):.0f} jobs"
        )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    use_project(PROJECT_ROOT)  # the checkout this tool measures
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000, help="source changes in the saved warehouse")
    parser.add_argument("--keys", type=int, default=200_000, help="distinct keys over all tables")
    parser.add_argument("--small-messages", type=int, default=1000, help="messages of each build")
    parser.add_argument("--builds", type=int, default=8, help="small builds in a row (default 8)")
    parser.add_argument(
        "--alternate",
        type=alternation,
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="an environment variable set to V1, V2, ... for builds 1, 2, ... in turn (repeat for several)",
    )
    parser.add_argument("--statements", action="store_true", help="each statement's seconds and rule seconds")
    parser.add_argument("--jobs", action="store_true", help="the build's Spark jobs by kind, with their seconds")
    parser.add_argument(
        "--runner", action="store_true", help="the builds as cycles of a warm cdc-run of its own, timed from outside"
    )
    parser.add_argument("--fresh", action="store_true", help="generate the messages and the saved warehouse again")
    parser.add_argument("--work-dir", type=Path, default=PROJECT_ROOT / "artifacts" / "profile_builds")
    parser.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.runner and (args.alternate or args.statements or args.jobs):
        parser.error("--runner times the runner from outside: it takes no --alternate, --statements or --jobs")
    work = args.work_dir.resolve()
    os.environ.update({"CDC_SCHEMA": SCHEMA, "CDC_TARGET": "local", "CDC_SPARK_HOME": str(work / "spark")})
    if args.prepare_only:
        prepare(args, work)
        return 0
    if args.fresh or not (work / "saved").is_dir():
        shutil.rmtree(work / "saved", ignore_errors=True)
        child = [arg for arg in argv if arg != "--fresh"]
        subprocess.run([sys.executable, "-m", "cdc_bench.profile_builds", "--prepare-only", *child], check=True)
        shutil.copytree(work / "spark", work / "saved")
    missing = [number for number in range(args.builds) if not (work / "increments" / f"{number:03d}").is_dir()]
    if missing:
        raise SystemExit(f"the saved messages hold {min(missing)} increments; run with --fresh --builds {args.builds}")
    if args.runner:
        runner_profile(args, work)
    else:
        profile(args, work, args.alternate)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
