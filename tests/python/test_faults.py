"""Faults: loads started together, a load killed part-way and builds killed inside each
incremental model, each followed by the next run, end exactly where a clean run ends
(contract: nothing lost, nothing twice; re-running is the recovery)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_dbt_spark.locks import embedded_metastore_lock, hold_embedded_metastore, release_embedded_metastores
from cdc_testkit.faults import (
    BUILD,
    LOADER,
    finished_models,
    incremental_models,
    kill_inside,
    kill_loader,
    land_together,
    project_environment,
    query,
    run,
)
from cdc_testkit.harness import Project, write_jsonl
from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import write_stream

pytestmark = pytest.mark.e2e  # killed processes

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


def test_killed_and_concurrent_runs_end_where_a_clean_run_ends(new_project, tmp_path: Path) -> None:
    """One project through every fault, against a clean project of the same files:
    1. two loaders started together land the first load;
    2. after a build, the second load (four batches) is killed once one batch is committed,
       then run again;
    3. `dbt run` is killed inside each incremental model in turn, each run redoing the model
       the last one was killed in and getting one model further; then a build."""
    changes = Scenario(seed=7, tables=2, keys=20, events=300, truncate_every=97).generate()
    files = write_stream(changes, "dataworks_json", tmp_path / "in", files=4, seed=7, duplicate_share=0.1)
    bad = write_jsonl(tmp_path / "in" / "bad.jsonl", ['{"payload": {"op": "UPSERT"', '{"schema": {}, "payload": {}}'])
    loads = (files[:1], [*files[1:], bad])

    batch_size = sum(1 for _ in files[1].open())  # the second load: a batch per file
    reference: Project = new_project()
    for paths in loads:  # in the same batches (which copy of a message is kept follows them)
        reference.land("dataworks_json", *paths, max_batch_messages=batch_size)
    reference.build(tests=False)  # one run over every batch ends where any sequence of runs ends

    home = tmp_path / "faults"
    environment = project_environment(home, "faults")

    def succeeds(*command: str) -> None:
        finished = run(environment, *command)
        assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]

    first_load = ["--format", "dataworks_json", *map(str, loads[0])]
    together = land_together(environment, first_load)
    assert [code for code, _ in together] == [0, 0], together
    # one landed the file; the other waited (the metastore, then the landing lock) and skipped it
    assert sum(": already landed" in log for _, log in together) == 1, together
    succeeds(*BUILD, "--exclude-resource-type", "test")  # the data tests run on the last build
    models = incremental_models(home / "target")
    assert len(models) >= 7, models

    second_load = ["--format", "dataworks_json", "--max-batch-messages", str(batch_size), *map(str, loads[1])]
    assert kill_loader(environment, second_load, after_commits=1), "the load finished before it could be killed"
    succeeds(*LOADER, *second_load)

    # each run leaves out the models earlier runs finished (they are up to date: nothing was
    # landed since), so it redoes the model the last run was killed in, then goes on to the next
    finished: set[str] = set()
    for model in models:
        output = kill_inside(
            environment, model, KILL_AFTER_SECONDS, *(["--exclude", *sorted(finished)] if finished else [])
        )
        done = finished_models(output, "faults")
        assert model not in done, f"{model} finished before the kill"
        finished |= done
    succeeds(*BUILD)

    queries = {table: f"select * from {{schema}}.{table}" for table in TABLES}
    landed = "select count(*) as messages, count(distinct message_id) as ids from {schema}.raw_cdc_messages"
    after_faults = query(environment, landed, *queries.values())
    assert after_faults[landed] == [dict(zip(("messages", "ids"), reference.query(landed)[0], strict=True))]
    for table, text in queries.items():
        clean = [json.loads(row[0]) for row in reference.query(f"select to_json(struct(*)) from ({text})")]
        assert comparable(after_faults[text]) == comparable(clean), table
    assert after_faults[queries["cdc_quarantine"]] and after_faults[queries["cdc_ddl_events"]]


def test_an_ended_jvm_lets_go_of_the_embedded_metastore(tmp_path: Path) -> None:
    """A process holds the embedded metastore until it lets go (scripts/bench.py does, once it has
    ended its JVM, before the small run's commands open the metastore themselves)."""
    conf = {
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={tmp_path}/metastore_db;create=true"
    }
    other_process = [
        sys.executable,
        "-c",
        "import fcntl, sys; fcntl.flock(open(sys.argv[1], 'w'), fcntl.LOCK_EX | fcntl.LOCK_NB)",
        str(embedded_metastore_lock(conf)),
    ]
    hold_embedded_metastore(conf)
    try:
        assert subprocess.run(other_process, capture_output=True).returncode != 0  # held: it would wait
    finally:
        release_embedded_metastores()
    assert subprocess.run(other_process, capture_output=True).returncode == 0
