"""Benchmark: what a full build, an incremental and a small run cost, against the floor and two anchors.

    python scripts/bench.py --events 2000000 --keys 200000

Steps, on the same data and Spark settings (the local target), in one run:
  1. floor         Spark reads the raw files and writes them once as parquet
  2. hand_written  the one-job SCD2 a Spark user would write instead (bench_hand_written.py), in the same
                   session, from the raw files to written history and current tables (dataworks_json only)
  3. full          load_raw.py + dbt build from empty
  4. landed_hand_written  the hand-written job again, over the landed messages instead of the raw files; with
                   the full load's seconds, `bound`: what full would cost if the build did no more than that job
  5. landed_one_pass  the same job plus the least of the contract no build can leave out (typed images, copies
                   dropped, one change per position, an events table written before history); with the full
                   load's seconds, `one_pass_bound`: the least full can cost while doing what the contract asks
  6. incremental   land a further 1% of events, then dbt build
  7. anchor        Spark's own Auto CDC (pyspark.pipelines.create_auto_cdc_flow, SCD type 2)
                   over the same canonical events, if it can run here (else: why not)
  8. small         land --small-messages more messages and dbt build, as a user runs them: two
                   commands, each its own process and JVM (after the bench's own Spark is stopped)
Prints a table and writes a JSON report (events, bytes, seconds, events/s, peak driver memory,
full/floor, full/hand_written, bound/floor, bound/hand_written, one_pass_bound/floor,
one_pass_bound/hand_written, incremental/full, ours/anchor, small
against its limit). Not part of the test suite.

    python scripts/bench.py --target cluster --events 2000000 --keys 200000

runs the same steps on a running cluster (make cluster): floor, hand_written and the loads run as one
application on its master (reading the shared metastore), dbt builds on its Thrift server, schema `bench`
(dropped first). Peak driver memory is then the Thrift server's, where dbt's SQL is planned.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_hand_written import HAND_WRITTEN, ONE_PASS
from cdc_generate import CONTAINER_FORMATS, ENCODERS, Scenario, message_lines

from cdc_dbt_spark.connection import PROJECT_ROOT, cluster_conf, cluster_home, cluster_spark, connect, end_spark
from cdc_dbt_spark.loader import LANDING_TABLE, land

log = logging.getLogger("bench")


@dataclass
class Step:
    name: str
    events: int = 0
    bytes: int = 0
    seconds: float = 0.0
    peak_driver_mb: float = 0.0
    note: str = ""
    parts: dict = field(default_factory=dict)

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


class DriverMemory:
    """Peak resident memory of the Spark driver JVM (VmHWM), reset between steps."""

    def __init__(self, pid: int | None = None) -> None:
        self.pid = pid  # default: the JVM this process started

    def _jvm_pid(self) -> int | None:
        if self.pid is None:
            for child in Path("/proc").glob("[0-9]*"):
                try:
                    status = (child / "status").read_text()
                    if f"PPid:\t{os.getpid()}\n" in status and "java" in (child / "comm").read_text():
                        self.pid = int(child.name)
                        break
                except OSError:
                    continue
        return self.pid

    def reset(self) -> None:
        pid = self._jvm_pid()
        if pid:
            with contextlib.suppress(OSError):
                Path(f"/proc/{pid}/clear_refs").write_text("5")

    def peak_mb(self) -> float:
        pid = self._jvm_pid()
        if not pid:
            return 0.0
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0


class MessageFiles:
    """Messages written round-robin into `files` JSON-lines files, counted with the changes they render."""

    def __init__(self, folder: Path, files: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.handles = [(folder / f"part-{number:04d}.jsonl").open("w", encoding="utf-8") for number in range(files)]
        self.changes = 0
        self.messages = 0
        self.bytes = 0

    def write(self, changes: int, texts: list[str]) -> None:
        self.changes += changes
        for text in texts:
            self.handles[self.messages % len(self.handles)].write(text + "\n")
            self.messages += 1
            self.bytes += len(text.encode()) + 1

    def close(self) -> None:
        for handle in self.handles:
            handle.close()


# changes rendered at a time: the stream is generated and written block by block, so that
# 20,000,000 events need no more memory than 2,000,000
BLOCK = 100_000


def generate(args: argparse.Namespace, work: Path) -> dict[str, MessageFiles]:
    """Messages of the full load (`--events` changes, folder base), a further 1% in commit order after it
    (extra) and the small run's changes after that (small, `--small-messages` messages), with duplicates and
    displaced messages (swapped within blocks of BLOCK)."""
    total = int(args.events * 1.01)
    scenario = Scenario(
        seed=args.seed,
        tables=args.tables,
        keys=max(1, args.keys // args.tables),
        # the stream is cut below once the small run has its messages: its length only needs to suffice
        events=total + 10 * args.small_messages + 1000,
        delete_share=args.delete_share,
        key_change_share=0.0,
        truncate_every=0,
        ddl_every=0,
        heartbeat_every=1000,
        transaction_markers=False,
    )
    log.info("generating %d changes over %d keys", total, args.keys)
    rng = random.Random(args.seed)

    def render(block: list) -> list[str]:
        texts = message_lines(block, args.format)
        texts += [text for text in texts if rng.random() < args.duplicate_share]
        for _ in range(int(len(texts) * args.out_of_order_share)):
            i, j = rng.randrange(len(texts)), rng.randrange(len(texts))
            texts[i], texts[j] = texts[j], texts[i]
        return texts

    files = {
        "base": MessageFiles(work / "base", args.files),
        "extra": MessageFiles(work / "extra", max(1, args.files // 100)),
        "small": MessageFiles(work / "small", 1),
    }
    block: list = []
    small_messages = 0
    for number, change in enumerate(scenario.stream(), start=1):
        block.append(change)
        if number > total:
            # whole changes (an update's two messages stay together), so about --small-messages messages
            small_messages += len(message_lines([change], args.format))
            if small_messages >= args.small_messages:
                break
            continue
        # blocks never straddle the end of the full load
        if len(block) == BLOCK or number == args.events or number == total:
            files["base" if number <= args.events else "extra"].write(len(block), render(block))
            block = []
            if number % 1_000_000 < BLOCK:
                log.info("generated %d of %d changes", number, total)
    files["small"].write(len(block), render(block))
    for messages in files.values():
        messages.close()
    return files


# what a scheduled run does: models and data tests (the unit tests do not depend on the data)
BUILD = ("build", "--exclude-resource-type", "unit_test")


def thrift_server_pid() -> int | None:
    """The JVM of the local cluster's Thrift server (spark-submit execs it), if scripts/cluster.py started it."""
    pids_path = cluster_home() / "pids.json"
    return json.loads(pids_path.read_text()).get("thrift-server") if pids_path.exists() else None


def run_dbt(*arguments: str) -> dict:
    """Run dbt; returns where its time went: seconds in models (and seeds), in data tests, and
    the slowest nodes."""
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke([*arguments, "--profiles-dir", "profiles", "--project-dir", str(PROJECT_ROOT)])
    if not result.success:
        raise SystemExit(f"dbt {' '.join(arguments)} failed; see logs/dbt.log")
    nodes = [(node.node.resource_type, node.node.name, node.execution_time) for node in result.result]
    slowest = sorted(nodes, key=lambda node: -node[2])[:5]
    return {
        "models_s": round(sum(seconds for kind, _, seconds in nodes if kind != "test"), 1),
        "data_tests_s": round(sum(seconds for kind, _, seconds in nodes if kind == "test"), 1),
        "slowest_s": {name: round(seconds, 1) for _, name, seconds in slowest},
    }


def anchor_auto_cdc(spark, schema: str, work: Path) -> Step:
    """Spark's Auto CDC flow (SCD type 2) over our canonical events, or exactly why it cannot run."""
    events_path = work / "canonical_events.parquet"
    spark.sql(
        f"select table_id, key_json, op, sequence_key, commit_ts, to_json(after_image) as after_json "
        f"from {schema}.cdc_events where op != 'truncate'"
    ).write.mode("overwrite").parquet(str(events_path))
    events = spark.read.parquet(str(events_path)).count()
    # a Spark Connect client cannot start in a process that already runs a regular Spark session
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("bench_anchor.py")), str(events_path), str(work / "anchor")],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        result = json.loads(completed.stdout)
    except json.JSONDecodeError:
        result = {
            "ran": False,
            "seconds": None,
            "reason": f"bench_anchor.py exited {completed.returncode}: {completed.stderr.strip()[-500:]}",
        }
    step = Step("anchor", events, 0, result["seconds"] or 0.0)
    step.note = ("ran: " if result["ran"] else "did not run: ") + result["reason"]
    return step


def hand_written(
    spark: Any,
    name: str,
    source_format: str,
    lines: Callable[[], Any],
    base: MessageFiles,
    out: Path,
    memory: DriverMemory,
    jobs: dict[str, Callable[[Any, Any, str], None]] = HAND_WRITTEN,
) -> Step:
    """The one-job SCD2 a user would write instead (or another of `jobs`, by format), timed like the floor:
    from the messages that `lines` reads (a DataFrame with their text as `value`) to written tables."""
    step = Step(name, base.changes, base.bytes)
    write_scd2 = jobs.get(source_format)
    if write_scd2 is None:
        step.note = f"not available for {source_format}: there is such a job for {', '.join(jobs)}"
        return step
    memory.reset()
    started = time.perf_counter()
    write_scd2(spark, lines(), str(out))
    step.seconds = time.perf_counter() - started
    step.peak_driver_mb = memory.peak_mb()
    # after the clock: what it wrote, to set beside what the full build wrote
    step.parts = {
        "history_rows": spark.read.parquet(str(out / "history")).count(),
        "current_rows": spark.read.parquet(str(out / "current")).count(),
    }
    return step


def typed_image_sql(source_format: str) -> Callable[[str], str]:
    """image -> the SQL of the project's macro cdc_typed_image for that image of `source_format` (its types in
    a map `column_types`), compiled by dbt, so that a bench job types images exactly as the models do."""
    from dbt.cli.main import dbtRunner

    placeholder = "cdc_bench_image"
    result = dbtRunner().invoke(
        [
            *("--log-level", "none", "compile", "--inline"),
            f"{{{{ cdc_typed_image('{placeholder}', 'column_types', '{source_format}') }}}}",
            *("--profiles-dir", "profiles", "--project-dir", str(PROJECT_ROOT)),
        ]
    )
    if not result.success:
        raise SystemExit("dbt compile --inline of cdc_typed_image failed; see logs/dbt.log")
    compiled = result.result.results[0].node.compiled_code
    return lambda image: compiled.replace(placeholder, image)


def small_run(source_format: str, small: MessageFiles, work: Path, env: dict[str, str]) -> Step:
    """Land the small run's messages, then dbt build, as a user runs them: two commands, each its own process
    starting its own JVM; wall time of both, load included."""
    dbt = Path(sys.executable).parent / "dbt"
    load_raw = PROJECT_ROOT / "scripts" / "load_raw.py"
    commands = {
        "load": [sys.executable, str(load_raw), "--format", source_format, str(work / "small")],
        "build": [str(dbt), *BUILD, "--profiles-dir", "profiles"],
    }
    seconds = {}
    started = time.perf_counter()
    for name, command in commands.items():
        output = work / f"small-{name}.log"
        log.info("small run: %s (output in %s)", " ".join(command), output)
        begun = time.perf_counter()
        with output.open("w") as handle:
            completed = subprocess.run(
                command, cwd=PROJECT_ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, check=False
            )
        seconds[name] = round(time.perf_counter() - begun, 1)
        if completed.returncode:
            raise SystemExit(f"small run: {' '.join(command)} exited {completed.returncode}; see {output}")
    step = Step("small", small.changes, small.bytes, time.perf_counter() - started)
    step.parts = {"messages": small.messages, "load_s": seconds["load"], "build_s": seconds["build"]}
    return step


# acceptance: a small run (1,000 messages) lands and builds within this many seconds
SMALL_LIMIT_S = 45.0


def main(argv: list[str] | None = None) -> int:
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

    memory.reset()
    steps.append(anchor_auto_cdc(spark, "bench", work))

    # last: the small run's commands open the metastore themselves (local) or need the cluster's cores
    # (cluster), so this process must let go of its Spark first
    end_spark(spark)
    steps.append(small_run(args.format, files["small"], work, {**os.environ, **bench_env}))

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
        "ours/anchor": ratio("full", "anchor"),
    }
    small_seconds = by_name["small"].seconds
    acceptance = {"small_s": round(small_seconds, 1), "limit_s": SMALL_LIMIT_S, "met": small_seconds <= SMALL_LIMIT_S}
    print(f"\n{'step':19s} {'events':>10s} {'MB':>8s} {'seconds':>9s} {'events/s':>10s} {'peak MB':>8s}  note")
    for step in steps:
        parts = {name: value for name, value in step.parts.items() if name != "slowest_s"}
        # the small run's JVMs are other processes: their memory is not measured
        peak = f"{step.peak_driver_mb:8.0f}" if step.peak_driver_mb else f"{'-':>8s}"
        print(
            f"{step.name:19s} {step.events:10d} {step.bytes / 1e6:8.1f} {step.seconds:9.1f} "
            f"{step.events_per_second:10.0f} {peak}  {step.note or parts or ''}"
        )
    for step in steps:
        if "slowest_s" in step.parts:
            print(f"slowest in {step.name}: {step.parts['slowest_s']}")
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
        "acceptance": acceptance,
    }
    report_path.write_text(json.dumps(report, indent=2))
    print(f"\nreport: {report_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
