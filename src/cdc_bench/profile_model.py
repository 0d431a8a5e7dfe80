"""Profile one model as a full build runs it: warm run times, Spark stages, the hottest Java frames.

    python scripts/profile_model.py int_cdc_records --runs 3 --jfr

Works on the warehouse a finished `scripts/bench.py` left (artifacts/bench: its Spark home, schema
`bench`), or any other (--spark-home, --schema). The model is compiled as a full refresh
(`dbt compile --full-refresh`), then its SELECT runs --runs times in one JVM into Spark's `noop` sink
(--sink parquet writes it under the work dir instead). The first run also pays for compiling the
generated code (JIT), so compare the later ones: the machine's speed drifts, and only runs of one
invocation are comparable. Printed: seconds per run, the last run's Spark stages (tasks, executor
run time, shuffle and output bytes) and, with --jfr, the Java frames the executor threads
spent the last run in (Java Flight Recorder samples; self: the frame was running; inclusive: the
frame was on the stack), which is where an optimisation has to start. `--sql FILE` profiles a
variant of the compiled SQL (ablations) beside the model's own, each run in turn.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cdc_dbt_spark.connection import connect
from cdc_dbt_spark.settings import use_project
from cdc_testkit import PROJECT_ROOT

# Spark's executor threads ("Executor task launch worker ...", "Executor task idle worker#N"): the
# samples of the query's work (the driver's planning is not in them)
EXECUTOR_THREAD = "Executor task "


def compile_model(model: str, target_path: Path) -> str:
    """The model's SQL as a full refresh builds it."""
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(
        [
            # not the compiled SQL on the console (`--quiet` still prints it); errors go to logs/dbt.log
            "--log-level",
            "none",
            "compile",
            "--full-refresh",
            "--select",
            model,
            "--target-path",
            str(target_path),
            "--profiles-dir",
            "profiles",
            "--project-dir",
            str(PROJECT_ROOT),
        ]
    )
    if not result.success:
        raise SystemExit(f"dbt compile --select {model} failed; see logs/dbt.log")
    compiled = sorted(target_path.glob(f"compiled/*/models/**/{model}.sql"))
    if not compiled:
        raise SystemExit(f"no compiled SQL for model {model!r} under {target_path}: is it a model of this project?")
    return compiled[0].read_text()


def stages_after(spark: Any, first_stage_id: int) -> list[dict[str, Any]]:
    """Completed Spark stages with an id of at least first_stage_id, from the driver's status store."""
    gateway = spark.sparkContext._gateway
    no_quantiles = gateway.new_array(gateway.jvm.double, 0)
    stages = spark.sparkContext._jsc.sc().statusStore().stageList(None, False, False, no_quantiles, None)
    rows = []
    for index in range(stages.size()):
        stage = stages.apply(index)
        if stage.stageId() < first_stage_id or stage.numCompleteTasks() == 0:
            continue
        rows.append(
            {
                "stage": stage.stageId(),
                "name": stage.name(),
                "tasks": stage.numCompleteTasks(),
                "run_s": stage.executorRunTime() / 1000,
                "shuffle_read_mb": stage.shuffleReadBytes() / 1e6,
                "shuffle_write_mb": stage.shuffleWriteBytes() / 1e6,
                "output_mb": stage.outputBytes() / 1e6,
            }
        )
    return sorted(rows, key=lambda row: row["stage"])


def next_stage_id(spark: Any) -> int:
    """One more than the highest stage id the application has seen so far."""
    stage_ids = spark.sparkContext.statusTracker().getActiveStageIds()
    known = stages_after(spark, 0)
    return max([*stage_ids, *(row["stage"] for row in known), -1]) + 1


def jvm_pid(spark: Any) -> int:
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def jcmd(pid: int, *arguments: str) -> None:
    subprocess.run(["jcmd", str(pid), *arguments], check=True, capture_output=True, text=True)


def hot_frames(recording: Path, top: int) -> tuple[int, list[tuple[str, int]], list[tuple[str, int]]]:
    """Execution samples of the executor threads: their count, then the most frequent frames, self and
    inclusive (each frame counted once per sample)."""
    printed = subprocess.run(
        ["jfr", "print", "--stack-depth", "64", "--events", "jdk.ExecutionSample", str(recording)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    samples = 0
    for event in printed.split("jdk.ExecutionSample")[1:]:
        if EXECUTOR_THREAD not in event:
            continue
        frames = re.findall(r"^\s+([\w.$<>]+)\(", event, re.MULTILINE)
        if not frames:
            continue
        samples += 1
        own[frames[0]] += 1
        inclusive.update(set(frames))
    return samples, own.most_common(top), inclusive.most_common(top)


def main(argv: list[str] | None = None) -> int:
    use_project(PROJECT_ROOT)  # the checkout this tool measures
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a model of this project, e.g. int_cdc_records")
    parser.add_argument("--runs", type=int, default=3, help="runs of the SELECT in one JVM (the first warms it)")
    parser.add_argument("--sql", type=Path, action="append", default=[], help="a variant of the SQL to run beside")
    parser.add_argument("--sink", choices=["noop", "parquet"], default="noop")
    parser.add_argument("--jfr", action="store_true", help="Java Flight Recorder samples of the last run")
    parser.add_argument("--top", type=int, default=25, help="frames listed with --jfr")
    parser.add_argument("--spark-home", type=Path, default=PROJECT_ROOT / "artifacts" / "bench" / "spark")
    parser.add_argument("--schema", default="bench")
    parser.add_argument("--work-dir", type=Path, default=PROJECT_ROOT / "artifacts" / "profile")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1; got {args.runs}")
    if not (args.spark_home / "metastore_db").is_dir():
        parser.error(f"no warehouse at --spark-home {args.spark_home}: run scripts/bench.py first, or name one")

    os.environ.update({"CDC_SPARK_HOME": str(args.spark_home.resolve()), "CDC_SCHEMA": args.schema})
    spark = connect("local").spark
    with tempfile.TemporaryDirectory() as target_path:
        queries = {args.model: compile_model(args.model, Path(target_path))}
    queries.update({path.name: path.read_text() for path in args.sql})
    args.work_dir.mkdir(parents=True, exist_ok=True)
    pid = jvm_pid(spark)

    seconds: dict[str, list[float]] = {name: [] for name in queries}
    last_stages: dict[str, list[dict[str, Any]]] = {}
    recording = args.work_dir / f"{args.model}.jfr"
    for run in range(1, args.runs + 1):
        for name, sql in queries.items():
            last = run == args.runs
            first_stage = next_stage_id(spark)
            if last and args.jfr and name == args.model:
                jcmd(pid, "JFR.start", "name=profile_model", "settings=profile")
            started = time.perf_counter()
            writer = spark.sql(sql).write.mode("overwrite")
            if args.sink == "noop":
                writer.format("noop").save()
            else:
                writer.parquet(str(args.work_dir / "output" / name))
            seconds[name].append(time.perf_counter() - started)
            if last and args.jfr and name == args.model:
                jcmd(pid, "JFR.stop", "name=profile_model", f"filename={recording}")
            if last:
                last_stages[name] = stages_after(spark, first_stage)
            print(f"run {run}: {name} {seconds[name][-1]:.1f} s", flush=True)

    print(f"\n{'query':40s} " + " ".join(f"{'run ' + str(run):>8s}" for run in range(1, args.runs + 1)))
    for name, times in seconds.items():
        print(f"{name:40s} " + " ".join(f"{value:8.1f}" for value in times))
    for name, stages in last_stages.items():
        print(f"\nstages of the last run of {name} (seconds of executor run time, MB):")
        titles = ("stage", "tasks", "run s", "sh read", "sh write", "output")
        print(" ".join(f"{title:>8s}" for title in titles))
        for row in stages:
            print(
                f"{row['stage']:8d} {row['tasks']:8d} {row['run_s']:8.1f} "
                f"{row['shuffle_read_mb']:8.1f} {row['shuffle_write_mb']:8.1f} {row['output_mb']:8.1f}"
            )
    if args.jfr:
        samples, own, inclusive = hot_frames(recording, args.top)
        print(f"\nJava frames of the last run of {args.model}: {samples} executor samples ({recording})")
        for title, frames in (("self", own), ("inclusive", inclusive)):
            print(f"-- {title}")
            for frame, count in frames:
                print(f"{100 * count / max(samples, 1):5.1f}% {frame}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
