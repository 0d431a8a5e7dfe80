"""The bench's steps besides the floor and the loads: dbt runs, the hand-written jobs, Spark's Auto
CDC anchor and the small run, each measured as a `Step`."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cdc_bench.data import MessageFiles
from cdc_bench.hand_written import HAND_MERGE, HAND_WRITTEN
from cdc_bench.spark_work import counted
from cdc_dbt_spark.connection import cluster_home
from cdc_testkit import PROJECT_ROOT

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


# what a scheduled run does: models and data tests (the unit tests do not depend on the data)
BUILD = ("build", "--exclude-resource-type", "unit_test")
# what a `cdc-run --once` logs (cdc_dbt_spark.loader, cdc_dbt_spark.runner): when a landing batch
# committed, and when cdc_current showed the cycle's changes
LANDING_COMMITTED = re.compile(r"^(\S+ \S+) cdc_load INFO batch \d+ committed", re.MULTILINE)
CURRENT_VISIBLE = re.compile(r"visible in cdc_current ([0-9.]+) s into the cycle")


def thrift_server_pid() -> int | None:
    """The JVM of the local cluster's Thrift server (spark-submit execs it), if scripts/cluster.py started it."""
    pids_path = cluster_home() / "pids.json"
    return json.loads(pids_path.read_text()).get("thrift-server") if pids_path.exists() else None


def run_dbt(*arguments: str) -> dict:
    """Run dbt; returns where its time went: seconds in models (and seeds), in data tests, and
    the slowest nodes; with Spark in this process (target local), the SQL statements and Spark jobs it ran
    (cdc_bench.spark_work)."""
    from dbt.cli.main import dbtRunner
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    with contextlib.ExitStack() as stack:
        work, node_results = stack.enter_context(counted(spark)) if spark else (None, [])
        result = dbtRunner().invoke([*arguments, "--profiles-dir", "profiles", "--project-dir", str(PROJECT_ROOT)])
        if result.success:
            node_results.extend(result.result)
    if not result.success:
        raise SystemExit(f"dbt {' '.join(arguments)} failed; see logs/dbt.log")
    nodes = [(node.node.resource_type, node.node.name, node.execution_time) for node in result.result]
    slowest = sorted(nodes, key=lambda node: -node[2])[:5]
    return {
        "models_s": round(sum(seconds for kind, _, seconds in nodes if kind != "test"), 1),
        "data_tests_s": round(sum(seconds for kind, _, seconds in nodes if kind == "test"), 1),
        "slowest_s": {name: round(seconds, 1) for _, name, seconds in slowest},
        **({"spark": work.summary()} if work else {}),
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
        [sys.executable, "-m", "cdc_bench.anchor", str(events_path), str(work / "anchor")],
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
            "reason": f"cdc_bench.anchor exited {completed.returncode}: {completed.stderr.strip()[-500:]}",
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
    # a job writes parquet or, as the build, Delta (its log beside the files)
    table_format = "delta" if (out / "history" / "_delta_log").is_dir() else "parquet"
    step.parts = {
        "history_rows": spark.read.format(table_format).load(str(out / "history")).count(),
        "current_rows": spark.read.format(table_format).load(str(out / "current")).count(),
    }
    return step


def hand_merge(
    spark: Any,
    source_format: str,
    base_lines: Callable[[], Any],
    increment_lines: Callable[[], Any],
    increment: MessageFiles,
    out: Path,
    memory: DriverMemory,
) -> Step:
    """The anchor for increments: the hand-written job's history of the full load written as a Delta table
    (not timed), then the SCD2 MERGE a Spark user writes from Delta's documentation of the increment's
    messages into it (cdc_bench.hand_written.merge_dataworks_json), timed from the raw files."""
    step = Step("hand_merge", increment.changes, increment.bytes)
    if source_format not in HAND_MERGE:
        step.note = f"not available for {source_format}: there is such a MERGE for {', '.join(HAND_MERGE)}"
        return step
    history, merge = HAND_MERGE[source_format]
    path = str(out / "history")
    history(base_lines()).write.format("delta").mode("overwrite").save(path)
    memory.reset()
    started = time.perf_counter()
    merge(spark, increment_lines(), path)
    step.seconds = time.perf_counter() - started
    step.peak_driver_mb = memory.peak_mb()
    step.parts = {"history_rows": spark.read.format("delta").load(path).count()}
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


def run_command(name: str, command: list[str], output: Path, env: dict) -> float:
    """Run `command` as its own process from the project root, its output in `output`; its wall seconds.
    Stops the bench, naming the command and its log, when it fails."""
    log.info("%s: %s (output in %s)", name, " ".join(command), output)
    started = time.perf_counter()
    with output.open("w") as handle:
        completed = subprocess.run(
            command, cwd=PROJECT_ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, check=False
        )
    if completed.returncode:
        raise SystemExit(f"{name}: {' '.join(command)} exited {completed.returncode}; see {output}")
    return time.perf_counter() - started


def user_run(name: str, source_format: str, messages: MessageFiles, folder: Path, work: Path, env: dict) -> Step:
    """Land the messages under `folder` and build them as the README tells a user to run a scheduled
    increment: `cdc-run --source FORMAT=FOLDER --once`, its own process starting its own JVM; wall
    time, load included. Parts from its log: load_s until the landing commit, build_s the rest,
    visible_s when cdc_current showed the changes (seconds into the cycle)."""
    cdc_run = Path(sys.executable).parent / "cdc-run"
    output = work / f"{name}.log"
    started = time.time()
    seconds = run_command(name, [str(cdc_run), "--source", f"{source_format}={folder}", "--once"], output, env)
    log_text = output.read_text()
    committed = LANDING_COMMITTED.findall(log_text)
    visible = CURRENT_VISIBLE.findall(log_text)
    load = datetime.strptime(committed[-1], "%Y-%m-%d %H:%M:%S,%f").timestamp() - started if committed else 0.0
    step = Step(name, messages.changes, messages.bytes, seconds)
    step.parts = {
        "messages": messages.messages,
        "load_s": round(load, 1),
        "build_s": round(seconds - load, 1),
        **({"visible_s": float(visible[-1])} if visible else {}),
    }
    return step


def hand_merge_process(
    name: str, source_format: str, messages: MessageFiles, history: Path, folder: Path, work: Path, env: dict
) -> Step:
    """The anchor of user_run: the hand-written MERGE of the same messages into the hand-written history
    (written by hand_merge), as its own process and JVM (cdc_bench.hand_merge_process); wall time."""
    step = Step(name, messages.changes, messages.bytes)
    if source_format not in HAND_MERGE or not history.exists():
        step.note = f"not available for {source_format}: there is such a MERGE for {', '.join(HAND_MERGE)}"
        return step
    command = [
        sys.executable,
        "-m",
        "cdc_bench.hand_merge_process",
        "--format",
        source_format,
        str(history),
        str(folder),
    ]
    step.seconds = run_command(name, command, work / f"{name}.log", env)
    step.parts = {"messages": messages.messages}
    return step


def history_files_and_current_scan(spark: Any, schema: str) -> dict:
    """The file count of cdc_history (Delta's DESCRIBE DETAIL) and the seconds of a full scan of cdc_current
    (every column read; Spark's noop sink refuses a view over a Delta table: a hash of each row instead)."""
    files = spark.sql(f"describe detail {schema}.cdc_history").first()["numFiles"]
    started = time.perf_counter()
    spark.sql(f"select max(xxhash64(to_json(struct(*)))) from {schema}.cdc_current").collect()
    return {"history_files": files, "current_scan_s": round(time.perf_counter() - started, 2)}


def land_and_build(
    source_format: str, folders: list[Path], build: tuple[str, ...], describe: Callable[[int], str]
) -> tuple[list[float], int, list[dict]]:
    """Each folder landed, then dbt `build`, in this process, as a runner does it: the seconds of each
    (landing and build), the messages landed and what each build ran in Spark (run_dbt's `spark`: statements,
    jobs). `describe` names increment number n (from 1) in the log."""
    from cdc_dbt_spark.loader import land

    each, messages, work = [], 0, []
    for number, folder in enumerate(folders, 1):
        started = time.perf_counter()
        messages += land(source_format, [str(folder)])["messages"]
        work.append(run_dbt(*build).get("spark", {}))
        each.append(round(time.perf_counter() - started, 1))
        log.info("%s of %d: %.1f s %s", describe(number), len(folders), each[-1], work[-1].get("statements", ""))
    return each, messages, work


def median_work(work: list[dict]) -> dict:
    """The median statements and jobs of builds' Spark work (run_dbt's `spark`), with the heaviest nodes of the
    median build by jobs; empty where Spark was not in this process."""
    counted_builds = sorted((build for build in work if build), key=lambda build: build["jobs"])
    if not counted_builds:
        return {}
    middle = counted_builds[len(counted_builds) // 2]
    statements = sorted(build["statements"] for build in counted_builds)
    return {**middle, "statements": statements[len(statements) // 2]}


def increments(spark: Any, source_format: str, folders: list[Path], schema: str) -> Step:
    """Small increments in a row in this process, as a runner does them: land one folder, dbt build, the next;
    the seconds of each. Then cdc_history's files and a scan of cdc_current before and after the documented
    maintenance (dbt run-operation cdc_maintain)."""
    from dbt.cli.main import dbtRunner

    step = Step("increments")
    each, step.events, work = land_and_build(source_format, folders, BUILD, lambda number: f"increment {number}")
    step.seconds = sum(each)
    before = history_files_and_current_scan(spark, schema)
    started = time.perf_counter()
    maintained = dbtRunner().invoke(
        ["run-operation", "cdc_maintain", "--profiles-dir", "profiles", "--project-dir", str(PROJECT_ROOT)]
    )
    if not maintained.success:
        raise SystemExit("dbt run-operation cdc_maintain failed; see logs/dbt.log")
    maintain_s = round(time.perf_counter() - started, 1)
    after = history_files_and_current_scan(spark, schema)
    tenth = each[9] if len(each) >= 10 else None
    step.parts = {
        "seconds_each": each,
        "10th_s": tenth,
        "last_s": each[-1] if each else None,
        "last/10th": round(each[-1] / tenth, 2) if tenth else None,
        "spark_median": median_work(work),
        "before_maintain": before,
        "maintain_s": maintain_s,
        "after_maintain": after,
    }
    return step


def schema_changes(source_format: str, folders: list[Path], table_id: str) -> Step:
    """Small increments landed and built in this process, as `increments`, with one bench table typed: the
    project's example typed table (oracle_sample) pointed at `table_id` through --vars, the typed tables' data
    tests (written for the sample table) left out. The first increment is the table's first read by
    cdc_typed_columns (every batch); then, alternated, increments without a schema change and increments
    whose messages of that table add a column (cdc_bench.data.schema_folders). The seconds of each kind,
    and the ratio of their medians: a build after a schema change should cost no more than 1.2x one
    without."""
    typed = json.dumps({"cdc_typed_tables": {"oracle_sample": {"table_id": table_id}}})
    # the typed tables' data tests (`path:` of their YAML alone would leave out the models it documents too)
    build = (*BUILD, "--exclude", "resource_type:test,path:models/marts/typed", "--vars", typed)

    def describe(number: int) -> str:
        kind = "first read" if number == 1 else "no schema change" if number % 2 == 0 else "schema change"
        return f"schema_change increment {number} ({kind})"

    step = Step("schema_change")
    each, step.events, _ = land_and_build(source_format, folders, build, describe)
    without, changed = sorted(each[1::2]), sorted(each[2::2])
    step.seconds = changed[len(changed) // 2] if changed else 0.0
    ratio = round(step.seconds / without[len(without) // 2], 2) if without and changed else None
    step.parts = {
        "first_read_s": each[0] if each else None,
        "without_s": each[1::2],
        "with_change_s": each[2::2],
        "with/without": ratio,
    }
    return step


# acceptance: a small run (1,000 messages) lands and builds within this many seconds
SMALL_LIMIT_S = 30.0
