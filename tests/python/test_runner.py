"""cdc-run: land what is new and build, in one process, once or every few seconds; state in the
tables, so a killed runner is repaired by the next cycle, and SIGTERM stops it after its cycle."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from cdc_dbt_spark import runner
from cdc_dbt_spark.connection import spark_conf
from cdc_testkit.faults import LOADER, project_environment, query, run
from cdc_testkit.harness import PROJECT_ROOT
from cdc_testkit.oracle import assert_as_replayed
from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import write_stream

# the runner's build in these tests: no unit tests (they do not read landed data), no typed tables
BUILD_OPTIONS = ["--", "--exclude-resource-type", "unit_test", "--exclude", "path:models/marts/typed"]


def scenario(source_format: str, seed: int) -> list:
    changes = Scenario(seed=seed, tables=2, keys=12, events=150).generate()
    return [replace(change, database=f"{source_format}_s{seed}") for change in changes]


def test_once_lands_every_source_and_builds_every_batch_not_built(project, tmp_path: Path, caplog, monkeypatch) -> None:
    dataworks, debezium = scenario("dataworks_json", 21), scenario("debezium_json", 22)
    elsewhere = scenario("dataworks_json", 23)
    write_stream(dataworks, "dataworks_json", tmp_path / "dataworks", files=2, seed=21, duplicate_share=0.1)
    write_stream(debezium, "debezium_json", tmp_path / "debezium", seed=22)
    sources = [f"--source=dataworks_json={tmp_path / 'dataworks'}", f"--source=debezium_json={tmp_path / 'debezium'}"]
    # a batch that another load landed and no build took: the runner's build takes it too
    project.land("dataworks_json", *write_stream(elsewhere, "dataworks_json", tmp_path / "elsewhere", seed=23))
    project.activate()  # the runner works in the project's schema, as dbt and the loader do
    caplog.set_level(logging.INFO, logger="cdc_run")

    assert runner.main([*sources, "--once", *BUILD_OPTIONS]) == 0
    # the build's first step (what cdc_current reads) is logged before the rest of the build ends
    visible = re.search(r"cycle 1: \d+ messages landed, visible in cdc_current", caplog.text)
    built = re.search(r"cycle 1: \d+ messages landed from 3 files, 3 batches pending, built", caplog.text)
    assert visible and built and visible.start() < built.start()
    assert_current_as_replayed(project, dataworks + debezium + elsewhere)

    # a data test that fails in the second step fails the cycle after its changes are visible,
    # and keeps the watermark (cdc_load_batches) from passing them: the next cycle builds them again
    later = scenario("dataworks_json", 24)
    write_stream(later, "dataworks_json", tmp_path / "later", seed=24)
    sources.append(f"--source=dataworks_json={tmp_path / 'later'}")
    ledger = "select count(distinct load_batch_id) from {schema}.cdc_load_batches"
    built_batches = project.query(ledger)
    build = runner.Runner._dbt_build
    history_version = []
    expression_codegen = []

    def duplicate_a_version_then_build(self, *selection: str) -> bool:
        expression_codegen.append(os.environ.get(runner.EXPRESSION_CODEGEN_ENV))
        if selection[:1] == ("--exclude",):  # the second step: the first one's changes are visible
            assert_current_as_replayed(project, dataworks + debezium + elsewhere + later)
            history_version.extend(project.query("describe history {schema}.cdc_history limit 1")[0][:1])
            project.query(  # a version of a key the run changed, twice: test scd2_versions_are_valid fails
                "insert into {schema}.cdc_history select * from {schema}.cdc_history "
                "where table_id like 'dataworks_json_s24.%' and is_current limit 1"
            )
        return build(self, *selection)

    monkeypatch.setattr(runner.Runner, "_dbt_build", duplicate_a_version_then_build)
    assert runner.main([*sources, "--once", *BUILD_OPTIONS]) == 1
    assert history_version, "the build had no second step"
    # a build of a few hundred messages interprets the expressions outside whole-stage code
    assert expression_codegen == ["false", "false"]
    assert runner.EXPRESSION_CODEGEN_ENV not in os.environ
    assert project.query(ledger) == built_batches
    monkeypatch.undo()
    project.query(f"restore table {{schema}}.cdc_history to version as of {history_version[0]}")
    caplog.clear()
    # and compacts cdc_history after it (--compact-every 1): each build's MERGE wrote a file of current versions
    current_files = "select count(distinct _metadata.file_path) from {schema}.cdc_history where is_current"
    assert runner.main([*sources, "--once", "--compact-every", "1", *BUILD_OPTIONS]) == 0
    assert "cycle 1: 0 messages landed from 0 files, 1 batches pending, built" in caplog.text
    assert re.search(r"cycle 1: cdc_history compacted in [0-9.]+ s", caplog.text)
    assert project.query(current_files) == [(1,)]
    assert_current_as_replayed(project, dataworks + debezium + elsewhere + later)
    assert project.query(ledger) == [(built_batches[0][0] + 1,)]
    # that build parsed the batch of one format: int_cdc_records read no other (cdc_landed_formats)
    compiled = project.targets / project.schema / "compiled" / "cdc" / "models" / "intermediate"
    records = (compiled / "int_cdc_records.sql").read_text()
    assert "source_format = 'dataworks_json'" in records and "source_format = 'debezium_json'" not in records

    # nothing new: no build (cdc_history gets no new Delta version)
    commits = len(project.query("describe history {schema}.cdc_history"))
    caplog.clear()
    assert runner.main([*sources, "--once", *BUILD_OPTIONS]) == 0
    assert "cycle 1: 0 messages landed, nothing to build" in caplog.text
    assert len(project.query("describe history {schema}.cdc_history")) == commits


def test_a_build_of_few_messages_interprets_expressions_unless_the_environment_says(monkeypatch) -> None:
    """cdc-run's choice (CDC_EXPRESSION_CODEGEN, for the build's dbt invocations only) and what
    profiles.yml makes of it: Spark's code generation outside whole-stage code."""

    def factory_mode() -> str:
        return spark_conf("local")["spark.sql.codegen.factoryMode"]

    for name in ("CDC_CODEGEN", runner.EXPRESSION_CODEGEN_ENV):
        monkeypatch.delenv(name, raising=False)
    assert factory_mode() == "FALLBACK"
    with runner.expression_codegen(compiled=False):
        assert factory_mode() == "NO_CODEGEN"
    assert runner.EXPRESSION_CODEGEN_ENV not in os.environ
    with runner.expression_codegen(compiled=True):
        assert factory_mode() == "FALLBACK"
    monkeypatch.setenv(runner.EXPRESSION_CODEGEN_ENV, "true")  # the user's choice stands
    with runner.expression_codegen(compiled=False):
        assert factory_mode() == "FALLBACK"
    assert os.environ[runner.EXPRESSION_CODEGEN_ENV] == "true"
    monkeypatch.delenv(runner.EXPRESSION_CODEGEN_ENV)
    monkeypatch.setenv("CDC_CODEGEN", "false")  # no compiled code at all
    with runner.expression_codegen(compiled=True):
        assert factory_mode() == "NO_CODEGEN"


def assert_current_as_replayed(project, changes: list) -> None:
    current = project.query("select table_id, key_json, to_json(row_image) from {schema}.cdc_current")
    versions = project.query("select table_id, key_json, count(*) from {schema}.cdc_history group by 1, 2")
    assert_as_replayed(current, versions, changes)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--source", "nope=."], "unknown format 'nope'"),
        (["--source", "dataworks_json=/no/such/folder"], "no such file or folder: /no/such/folder"),
        (["--source", "dataworks_json"], "--source takes FORMAT=FOLDER"),
        (["--topic", "dataworks_json=cdc.orders"], "needs --bootstrap-servers"),
        (["--topic", "nope=cdc.orders", "--bootstrap-servers", "h:9092"], "unknown format 'nope'"),
        ([], "give at least one --source FORMAT=FOLDER or --topic FORMAT=TOPIC"),
    ],
)
def test_bad_sources_are_named_before_spark_starts(arguments, message, capsys) -> None:
    try:
        code = runner.main([*arguments, "--once"])
    except SystemExit as exit_:  # argparse's errors
        code = exit_.code
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.mark.e2e  # killed
def test_killed_runner_is_repaired_by_the_next_and_sigterm_ends_the_cycle_first(tmp_path: Path) -> None:
    """A runner SIGKILLed inside a build leaves its batch unbuilt; the next runner builds it
    without landing anything twice, and a SIGTERM while it builds ends it after that cycle."""
    changes = Scenario(seed=31, tables=2, keys=12, events=150).generate()
    folder = tmp_path / "in"
    write_stream(changes, "dataworks_json", folder, files=2, seed=31, duplicate_share=0.1)
    environment = {**project_environment(tmp_path, "runner"), "PYTHONUNBUFFERED": "1"}  # dbt's lines as printed
    command = [sys.executable, "-m", "cdc_dbt_spark.runner", "--source", f"dataworks_json={folder}", "--every", "1"]

    def start() -> subprocess.Popen:
        return subprocess.Popen(
            [*command, *BUILD_OPTIONS, "--exclude-resource-type", "test"],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=PROJECT_ROOT,
            start_new_session=True,  # its own process group: the runner and its Spark JVM
        )

    def read_until(process: subprocess.Popen, pattern: str, output: list[str]) -> None:
        for line in process.stdout:
            output.append(line)
            if re.search(pattern, line):
                return
        raise AssertionError(f"the runner ended before {pattern!r}:\n{''.join(output)[-3000:]}")

    killed = start()
    output: list[str] = []
    try:  # killed in its first cycle's build, once the files are landed
        read_until(killed, r"START sql incremental model runner\.cdc_history ", output)
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()

    stopped = start()
    output = []
    read_until(stopped, r"START sql incremental model runner\.cdc_history ", output)
    stopped.send_signal(signal.SIGTERM)  # the runner only, not its Spark: the cycle ends first
    output += stopped.stdout.readlines()
    assert stopped.wait(timeout=300) == 0, "".join(output)[-3000:]
    log = "".join(output)
    assert "SIGTERM: stopping after this cycle" in log
    assert re.search(r"cycle 1: 0 messages landed from 0 files, 1 batches pending, built", log), log[-3000:]
    assert "stopped after 1 cycles" in log

    answers = query(
        environment,
        "select table_id, key_json, to_json(row_image) as image from {schema}.cdc_current",
        "select table_id, key_json, count(*) as versions from {schema}.cdc_history group by 1, 2",
        "select count(*) as messages, count(distinct source_file_sha256) as files from {schema}.raw_cdc_messages",
    )
    current, versions, landed = answers.values()
    assert_as_replayed(
        [(row["table_id"], row["key_json"], row["image"]) for row in current],
        [(row["table_id"], row["key_json"], row["versions"]) for row in versions],
        changes,
    )
    lines = sum(1 for path in folder.iterdir() for _ in path.open())
    assert landed == [{"messages": lines, "files": 2}]  # each file landed once


@pytest.mark.e2e  # what a killed process leaves, and a loader process of its own
def test_a_metastore_whose_creation_was_killed_is_made_again(tmp_path: Path) -> None:
    """What Derby leaves of an embedded metastore when its first process is killed while
    creating it (no service.properties): the next process of ours removes it and creates it."""
    environment = project_environment(tmp_path, "half_made")
    unfinished = tmp_path / "spark" / "metastore_db"
    for folder in ("log", "tmp"):
        (unfinished / folder).mkdir(parents=True)
    for lock in ("db.lck", "dbex.lck"):
        (unfinished / lock).write_text("")
    files = write_stream(scenario("dataworks_json", 81), "dataworks_json", tmp_path / "in", seed=81)
    loaded = run(environment, *LOADER, "--format", "dataworks_json", *map(str, files))
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert (unfinished / "service.properties").is_file()


@pytest.mark.parametrize(
    ("options", "builds"),
    [
        # the runner's two steps; a user's --exclude is added to each (dbt unions repeated --exclude)
        (
            ["--exclude", "path:models/marts/typed"],
            [
                ("--select", "+cdc_current", "--indirect-selection", "empty"),
                ("--exclude", "+cdc_current", "--indirect-selection", "empty"),
            ],
        ),
        # options that choose nodes themselves: one `dbt build` as given
        (["--select", "cdc_events"], [()]),
        (["-s", "cdc_events"], [()]),
        (["--selector=nightly"], [()]),
        (["--indirect-selection", "cautious"], [()]),
    ],
)
def test_a_cycle_builds_in_two_steps_unless_the_options_select_nodes(options, builds, caplog) -> None:
    cycle_runner = runner.Runner.__new__(runner.Runner)  # no Spark: only the choice of builds is tested
    cycle_runner.dbt_arguments = options
    invoked = []
    cycle_runner._dbt_build = lambda *selection: invoked.append(selection) or True
    caplog.set_level(logging.INFO, logger="cdc_run")
    assert cycle_runner._build(runner.Cycle(1, messages=5), started=0.0)
    assert invoked == builds
    assert ("visible in cdc_current" in caplog.text) == (len(builds) == 2)


def test_a_failed_first_step_ends_the_build() -> None:
    """Step 2 would build cdc_load_batches, the watermark, over batches cdc_history did not take."""
    cycle_runner = runner.Runner.__new__(runner.Runner)
    cycle_runner.dbt_arguments = []
    invoked = []
    cycle_runner._dbt_build = lambda *selection: invoked.append(selection) and False
    assert not cycle_runner._build(runner.Cycle(1), started=0.0)
    assert invoked == [("--select", "+cdc_current", "--indirect-selection", "empty")]


def test_the_runner_compacts_history_when_its_last_commits_hold_no_compaction(caplog) -> None:
    """cdc_compact_history when none of cdc_history's last `compact_every` commits is an OPTIMIZE (the
    table's history: a new process, or --once, keeps the cadence); 0: never; a failed compaction is
    tried again after the next build; one that commits nothing is not tried again for as many builds."""
    operations: list[str] = []  # cdc_history's Delta history, oldest first
    outcome = {"success": True, "commits": True}

    class History:
        schema = "cdc"

        @staticmethod
        def sql(statement: str) -> list[tuple]:
            limit = int(statement.rsplit(" ", 1)[1])
            assert statement == f"describe history cdc.cdc_history limit {limit}"
            commits = [(version, None, None, None, operation) for version, operation in enumerate(operations)]
            return commits[::-1][:limit]

    def dbt(*arguments: str) -> SimpleNamespace:
        assert arguments == ("run-operation", "cdc_compact_history")
        if outcome["success"] and outcome["commits"]:
            operations.append("OPTIMIZE")
        return SimpleNamespace(success=outcome["success"], exception="conflict")

    def new_runner(compact_every: int) -> runner.Runner:
        cycle_runner = runner.Runner.__new__(runner.Runner)  # no Spark: only the cadence is tested
        cycle_runner.connection, cycle_runner._dbt = History, dbt
        cycle_runner.compact_every, cycle_runner.builds_since_compaction = compact_every, None
        return cycle_runner

    def builds(cycle_runner: runner.Runner, count: int) -> list[bool]:
        """Whether each of `count` builds (a MERGE commit each) was followed by a compaction."""
        done = []
        for number in range(1, count + 1):
            operations.append("MERGE")
            cycle = runner.Cycle(number)
            cycle_runner._compact(cycle)
            done.append(cycle.compacted_seconds is not None)
        return done

    caplog.set_level(logging.WARNING, logger="cdc_run")
    assert builds(new_runner(3), 7) == [False, False, True, False, False, True, False]
    # a runner started anew (or --once) counts the commits since the last compaction (one, the
    # previous runner's last build), not its own builds
    assert builds(new_runner(3), 2) == [False, True]
    # a compaction that fails is tried after the next build
    outcome["success"] = False
    failing = new_runner(3)
    assert builds(failing, 3) == [False, False, False]
    assert "cdc_history not compacted: conflict" in caplog.text
    outcome["success"] = True
    assert builds(failing, 1) == [True]
    # one that finds nothing to rewrite (no commit) waits as many builds before it is tried again
    outcome["commits"] = False
    assert builds(new_runner(2), 4) == [False, True, False, True]
    assert builds(new_runner(0), 5) == [False] * 5
