"""The loader works on the project it is run in, found as dbt finds it, never on the checkout
its package was installed from: one virtual environment may serve several clones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cdc_dbt_spark import loader
from cdc_testkit.harness import PROJECT_ROOT, write_jsonl

LOADER = (sys.executable, "-m", "cdc_dbt_spark.loader")


def clone(destination: Path) -> Path:
    """What the loader reads of a clone: its dbt_project.yml and profiles."""
    destination.mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "dbt_project.yml", destination)
    shutil.copytree(PROJECT_ROOT / "profiles", destination / "profiles")
    (destination / "models").mkdir()
    return destination


def load(cwd: Path, schema: str, *arguments: str) -> subprocess.CompletedProcess:
    # the environment of a user's shell: no warehouse or project named, the embedded default
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("CDC_", "DBT_PROJECT", "DBT_PROFILES"))
    }
    environment |= {"CDC_SCHEMA": schema, "CDC_DRIVER_JAVA_OPTIONS": os.environ["CDC_DRIVER_JAVA_OPTIONS"]}
    return subprocess.run([*LOADER, *arguments], env=environment, cwd=cwd, capture_output=True, text=True)


@pytest.mark.e2e  # a second clone, and the loader as a user's shell runs it: three processes of their own
def test_loader_lands_in_the_project_it_runs_in(tmp_path: Path) -> None:
    """The package is installed from this checkout (the first clone); a load run inside a
    second clone, from one of its subfolders, lands in the second clone's warehouse and
    says so; nothing reaches the first's. --project-dir names the same project from outside."""
    second = clone(tmp_path / "second")
    schema = f"t_{uuid.uuid4().hex[:10]}"
    messages = write_jsonl(tmp_path / "messages.jsonl", [{"payload": {"op": "MHEARTBEAT", "n": n}} for n in range(5)])

    inside = load(second / "models", schema, "--format", "dataworks_json", str(messages))
    assert inside.returncode == 0, inside.stderr[-3000:]
    table = second / ".spark" / "warehouse" / f"{schema}.db" / "raw_cdc_messages"
    assert f"project {second}: landing in {schema}.raw_cdc_messages at file:{table}" in inside.stderr, inside.stderr
    assert "5 messages from 1 files" in inside.stderr, inside.stderr
    assert (table / "_delta_log").is_dir()
    assert not (PROJECT_ROOT / ".spark" / "warehouse" / f"{schema}.db").exists()

    outside = load(tmp_path, schema, "--project-dir", str(second), "--format", "dataworks_json", str(messages))
    assert outside.returncode == 0, outside.stderr[-3000:]
    assert f"skipping {messages}: already landed" in outside.stderr, outside.stderr

    nowhere = load(tmp_path, schema, "--format", "dataworks_json", str(messages))
    assert nowhere.returncode != 0
    assert f"no dbt_project.yml in {tmp_path} or above" in nowhere.stderr, nowhere.stderr


def test_a_batch_id_is_above_every_landed_one_even_with_the_clock_behind(project, tmp_path: Path, monkeypatch) -> None:
    """A landing batch's id is the clock's microseconds, or one above the newest landed batch
    (Delta's max of the partition column) when the clock is behind it."""
    first = write_jsonl(tmp_path / "first.jsonl", [{"payload": {"op": "MHEARTBEAT", "n": 1}}])
    second = write_jsonl(tmp_path / "second.jsonl", [{"payload": {"op": "MHEARTBEAT", "n": 2}}])
    batches = "select distinct load_batch_id from {schema}.raw_cdc_messages order by 1"
    project.land("dataworks_json", first)
    ((landed,),) = project.query(batches)
    monkeypatch.setattr(loader.time, "time_ns", lambda: 1_000)  # a clock set back to 1970
    project.land("dataworks_json", second)
    assert project.query(batches) == [(landed,), (landed + 1,)]


def test_a_big_batch_from_fewer_files_than_cores_is_written_a_file_a_core(project, tmp_path: Path, monkeypatch) -> None:
    """A file is split by one task: a batch of at least SPREAD_MESSAGES messages from fewer files
    than cores is spread over the cores before it is written, so that the models' reads of it run
    in as many tasks; every message lands once. A smaller batch stays one file, and so does one of
    more than SPREAD_MAX_BYTES, whose row groups the readers split."""
    from pyspark.sql import SparkSession

    monkeypatch.setattr(loader, "SPREAD_MESSAGES", 20)
    monkeypatch.setattr(loader, "SPREAD_MAX_BYTES", 2_000)
    heartbeats = [{"payload": {"op": "MHEARTBEAT", "n": n}} for n in range(20)]
    small = write_jsonl(tmp_path / "small.jsonl", heartbeats[:19])
    big = write_jsonl(tmp_path / "big.jsonl", heartbeats)
    padded = write_jsonl(
        tmp_path / "padded.jsonl", [{"payload": {"op": "MHEARTBEAT", "n": n, "pad": "x" * 100}} for n in range(20)]
    )
    assert big.stat().st_size <= 2_000 < padded.stat().st_size
    for path in (small, big, padded):
        project.land("dataworks_json", path)
    cores = SparkSession.getActiveSession().sparkContext.defaultParallelism
    assert cores > 1  # the local target's
    landed = project.query(
        "select source_file, count(distinct _metadata.file_path), count(*), count(distinct message_index), "
        "min(message_index), max(message_index) from {schema}.raw_cdc_messages group by 1 order by 3, 1"
    )
    assert landed == [
        (str(small), 1, 19, 19, 0, 18),
        (str(big), cores, 20, 20, 0, 19),
        (str(padded), 1, 20, 20, 0, 19),
    ]
