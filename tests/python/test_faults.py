"""Faults: a build killed inside any incremental model, or a load killed part-way, then run
again, ends exactly where a clean run ends; loads started together land each message once
(contract: nothing lost, nothing twice; re-running is the recovery)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from cdc_faults import BUILD, LOADER, finished_model, incremental_models, kill_inside, query, run
from cdc_generate import Scenario, write_stream
from conftest import PROJECT_ROOT, Project, write_jsonl

# columns that differ between two projects landing the same files at other times (batch ids,
# build times, and the partition of closed versions: the run that closed them)
RUN_COLUMNS = {"load_batch_id", "built_at", "history_partition"}
TABLES = (
    "int_cdc_records",
    "cdc_events",
    "cdc_history",
    "cdc_current",
    "cdc_ddl_events",
    "cdc_heartbeats",
    "cdc_quarantine",
    "cdc_load_batches",
)
KILL_AFTER_SECONDS = 0.3  # after the model's start: past compiling, its statements are running


def comparable(rows: list[dict]) -> list[tuple]:
    """Rows without the columns that name a run, sorted."""
    return sorted(tuple(sorted((k, repr(v)) for k, v in row.items() if k not in RUN_COLUMNS)) for row in rows)


def test_build_killed_inside_each_incremental_model(new_project, tmp_path: Path) -> None:
    changes = Scenario(seed=7, tables=2, keys=20, events=300, truncate_every=97).generate()
    first, second = write_stream(changes, "dataworks_json", tmp_path / "in", files=2, seed=7, duplicate_share=0.1)
    bad = write_jsonl(tmp_path / "in" / "bad.jsonl", ['{"payload": {"op": "UPSERT"', '{"schema": {}, "payload": {}}'])
    loads = ([first], [second, bad])

    reference: Project = new_project()
    for paths in loads:
        reference.land("dataworks_json", *paths)
        reference.build(tests=False)

    home = tmp_path / "killed"
    environment = dict(
        os.environ,
        CDC_SPARK_HOME=str(home / "spark"),
        CDC_SCHEMA="killed_build",
        CDC_TARGET="local",
        DBT_TARGET_PATH=str(home / "target"),
        DBT_LOG_PATH=str(home / "logs"),
    )

    def succeeds(*command: str) -> None:
        finished = run(environment, *command)
        assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]

    succeeds(*LOADER, "--format", "dataworks_json", *map(str, loads[0]))
    succeeds(*BUILD)
    models = incremental_models(home / "target")
    assert len(models) >= 7, models
    succeeds(*LOADER, "--format", "dataworks_json", *map(str, loads[1]))
    for model in models:  # each killed run gets one model further than the one before
        output = kill_inside(environment, model, KILL_AFTER_SECONDS)
        assert not finished_model(output, "killed_build", model), f"{model} finished before the kill"
    succeeds(*BUILD)

    queries = {table: f"select * from {{schema}}.{table}" for table in TABLES}
    killed = query(environment, *queries.values())
    for table, text in queries.items():
        clean = [json.loads(row[0]) for row in reference.query(f"select to_json(struct(*)) from ({text})")]
        assert comparable(killed[text]) == comparable(clean), table
    assert killed[queries["cdc_quarantine"]] and killed[queries["cdc_ddl_events"]]


def test_loader_killed_part_way_lands_everything_exactly_once(tmp_path: Path) -> None:
    """SIGKILL the loader after its first batch is committed; the re-run lands the rest, once."""
    files = [
        write_jsonl(
            tmp_path / "in" / f"part-{number:02d}.jsonl",
            [{"payload": {"op": "MHEARTBEAT", "n": number * 1000 + i}} for i in range(1000)],
        )
        for number in range(12)
    ]
    environment = dict(os.environ, CDC_SPARK_HOME=str(tmp_path / "spark"), CDC_SCHEMA="killed", CDC_TARGET="local")
    command = [*LOADER, "--format", "dataworks_json", "--max-batch-messages", "2000", str(tmp_path / "in")]
    loader = subprocess.Popen(command, env=environment, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    committed = 0
    deadline = time.monotonic() + 300
    for line in loader.stderr:
        if "committed" in line:
            committed += 1
            if committed == 2:
                loader.send_signal(signal.SIGKILL)
                break
        assert time.monotonic() < deadline, "the loader never committed a batch"
    loader.wait()
    assert loader.returncode == -signal.SIGKILL, "the loader finished before it could be killed"

    rerun = subprocess.run(command, env=environment, capture_output=True, text=True, cwd=PROJECT_ROOT)
    assert rerun.returncode == 0, rerun.stderr
    assert landed_counts(environment) == (len(files) * 1000, len(files) * 1000, len(files))


def landed_counts(environment: dict[str, str]) -> tuple[int, int, int]:
    """Rows, distinct message ids and distinct files of the landing table."""
    (row,) = query(
        environment,
        "select count(*) as n, count(distinct message_id) as ids, count(distinct source_file) as files "
        "from {schema}.raw_cdc_messages",
    ).popitem()[1]
    return row["n"], row["ids"], row["files"]


def land_together(environment: dict[str, str], source_format: str, *paths: Path, loaders: int = 2) -> list[str]:
    """Starts `loaders` loads of the same files at the same moment; each must succeed. Their logs."""
    command = [*LOADER, "--format", source_format]
    started = [
        subprocess.Popen(
            [*command, *map(str, paths)], env=environment, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT
        )
        for _ in range(loaders)
    ]
    logs = [loader.communicate()[1] for loader in started]
    for loader, log in zip(started, logs, strict=True):
        assert loader.returncode == 0, log
    return logs


def test_loaders_started_together_land_each_message_once(tmp_path: Path) -> None:
    """Two loaders on the same files, on the embedded target: the second waits for the
    metastore, then finds every file landed."""
    files = [
        write_jsonl(
            tmp_path / "in" / f"part-{number}.jsonl",
            [{"payload": {"op": "MHEARTBEAT", "n": number * 100 + i}} for i in range(100)],
        )
        for number in range(3)
    ]
    environment = dict(os.environ, CDC_SPARK_HOME=str(tmp_path / "spark"), CDC_SCHEMA="together", CDC_TARGET="local")
    logs = land_together(environment, "dataworks_json", *files)
    assert sum(": already landed" in log for log in logs) == 1, logs
    assert landed_counts(environment) == (300, 300, 3)
