"""What Delta Lake gives the project's tables: a reader never sees half a build, a build is
undone with RESTORE, and maintenance (OPTIMIZE, VACUUM) changes no row (run-operations
cdc_restore and cdc_maintain)."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cdc_dbt_spark.settings import project_formats
from cdc_testkit.harness import NOT_SENT, PROJECT_ROOT, jvm_log
from cdc_testkit.reader import fingerprint_sql
from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import write_stream


def state(project, built_at: bool = True) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """History, current rows and the watermark table (with or without when each batch was built),
    comparable."""
    columns = "*" if built_at else "* except (built_at)"
    batches = project.query(f"select {columns} from {{schema}}.cdc_load_batches order by load_batch_id, source_format")
    return project.history(), project.current(), batches


def test_restore_undoes_a_build_and_maintain_changes_no_row(project, tmp_path: Path) -> None:
    changes = Scenario(seed=5, tables=2, keys=12, events=160).generate()
    first, second = write_stream(changes, "dataworks_json", tmp_path / "stream", files=2, seed=5, shuffle=True)
    project.land("dataworks_json", first)
    project.build(tests=False)
    before = state(project)
    (as_of,) = project.query("select date_format(current_timestamp(), 'yyyy-MM-dd HH:mm:ss.SSSSSS')")[0]
    time.sleep(1)  # the next commits are later than as_of, to the millisecond Delta records
    project.land("dataworks_json", second)
    project.build(tests=False)

    # deletion vectors on the one table whose rows a build updates and deletes, on no other:
    # on a table with no vector yet, the feature costs a Spark job per read (README)
    def deletion_vector_properties(table: str) -> list[tuple]:
        properties = project.query(f"show tblproperties {{schema}}.{table}")
        return sorted((name, value) for name, value in properties if "deletionvectors" in name.lower())

    assert deletion_vector_properties("cdc_history") == [
        ("delta.enableDeletionVectors", "true"),
        ("delta.feature.deletionVectors", "supported"),
    ]
    appended_tables = ("raw_cdc_messages", "cdc_events", "cdc_load_batches")
    assert [table for table in appended_tables if deletion_vector_properties(table)] == []

    after = state(project)
    state_without_built_at = state(project, built_at=False)
    assert after[0] != before[0] and len(after[2]) == len(before[2]) + 1
    # that incremental run replayed the touched keys from their stored versions read once, into
    # a cached session view, and let that view (and so the cache) go with the run; the MERGE read the
    # model's query as a subquery: no cdc_history__dbt_tmp either (macros/materializations/incremental.sql)
    compiled = project.targets / project.schema / "compiled" / "cdc" / "models" / "marts" / "cdc_history.sql"
    assert re.search(r"select \* from cdc_history__touched_versions_\w{36}\b", compiled.read_text())
    assert project.query("show views like 'cdc_history__*'") == []

    # the build undone: every model's table as it was, the watermark too
    project.dbt("run-operation", "cdc_restore", "--args", json.dumps({"as_of": as_of}))
    assert state(project) == before
    # so the next build processes the second load again, and gets the same rows
    project.build()
    assert state(project, built_at=False) == state_without_built_at

    # maintenance changes files, not rows
    def history_files() -> int:
        detail = project.query("describe detail {schema}.cdc_history")
        return detail[0][9]  # numFiles

    files = history_files()
    project.dbt("run-operation", "cdc_maintain")
    # (OPTIMIZE commits only where a partition has several files to compact: none at this size)
    operations = [row[4] for row in project.query("describe history {schema}.cdc_history limit 2")]
    assert operations == ["VACUUM END", "VACUUM START"]
    assert history_files() <= files
    assert state(project, built_at=False) == state_without_built_at


@pytest.mark.e2e
def test_a_reader_sees_only_committed_versions_while_a_build_writes(project, tmp_path: Path) -> None:
    """A reader queries cdc_history in a loop (its own process and Spark, by path) while a build
    writes it: each time it sees the current versions of one committed version. End to end: a
    second JVM beside the build's."""
    changes = Scenario(seed=5, tables=2, keys=12, events=160).generate()
    first, second = write_stream(changes, "dataworks_json", tmp_path / "stream", files=2, seed=5, shuffle=True)
    project.land("dataworks_json", first)
    project.build(tests=False)
    described = project.query("describe table extended {schema}.cdc_history")
    (location,) = [value for name, value, *_ in described if name == "Location"]
    reads, stop = tmp_path / "reads.jsonl", tmp_path / "stop"
    reader_command = [sys.executable, "-m", "cdc_testkit.reader", location, str(reads), str(stop)]
    reader = subprocess.Popen(reader_command, cwd=PROJECT_ROOT)
    try:
        while not reads.exists() or not reads.read_text():
            assert reader.poll() is None, "the reader exited before its first read"
            time.sleep(0.5)
        project.land("dataworks_json", second)
        build_started = time.time()
        project.build(tests=False)
        build_ended = time.time()
        time.sleep(2)
    finally:
        stop.touch()
        assert reader.wait(timeout=120) == 0
    observed = [json.loads(line) for line in reads.read_text().splitlines()][1:]
    versions = [row[0] for row in project.query("describe history {schema}.cdc_history")]
    committed = {
        tuple(project.query(fingerprint_sql(f"{{schema}}.cdc_history version as of {version}"))[0])
        for version in versions
    }
    assert all(rows == keys for rows, keys, _ in committed)  # one current version per key, in every version
    assert [read for read in observed if tuple(read["seen"]) not in committed] == []
    assert any(build_started <= read["started"] and read["ended"] <= build_ended for read in observed)


def test_restore_names_a_bad_timestamp(project) -> None:
    messages: list[str] = []
    result = project.dbt(
        "run-operation",
        *("cdc_restore", "--args", "{as_of: yesterday}"),
        check=False,
        callbacks=[lambda event: messages.append(event.info.msg)],
    )
    assert not result.success
    assert any(
        "cdc_restore: argument `as_of` must be a UTC timestamp 'YYYY-MM-DD HH:MM:SS'; got 'yesterday'" in message
        for message in messages
    ), messages


def test_a_seed_is_loaded_again_only_when_it_changed(project) -> None:
    """The project's seed materialization (macros/materializations/seed.sql): a build leaves a
    seed whose file is unchanged as it is, and replaces a changed one in one commit."""
    table = "{schema}.cdc_table_keys"
    with (PROJECT_ROOT / "seeds" / "cdc_table_keys.csv").open(newline="") as csv_file:
        in_file = sorted(row["table_id"] for row in csv.DictReader(csv_file))

    def versions() -> list[tuple[int, str]]:
        return [(row[0], row[4]) for row in project.query(f"describe history {table}")]

    project.dbt("seed", "--select", "cdc_table_keys")
    loaded = versions()
    assert loaded[0][1] == "CREATE OR REPLACE TABLE AS SELECT"
    assert sorted(row[0] for row in project.query(f"select table_id from {table}")) == in_file

    result = project.dbt("seed", "--select", "cdc_table_keys")
    assert [node.message for node in result.result] == ["UNCHANGED"]
    assert versions() == loaded  # no new commit

    # a table that no longer holds what the file says, as after an edit of the file: the stored
    # fingerprint differs from the file's, so the next load replaces the rows, in one commit
    project.query(f"insert into {table} values ('stale.table', '[\"id\"]', 'not in the file')")
    project.query(f"alter table {table} set tblproperties ('cdc.seed_fingerprint' = 'stale')")
    project.dbt("seed", "--select", "cdc_table_keys")
    assert sorted(row[0] for row in project.query(f"select table_id from {table}")) == in_file
    assert [operation for _, operation in versions()[:3]] == [
        "CREATE OR REPLACE TABLE AS SELECT",
        "SET TBLPROPERTIES",
        "WRITE",
    ]

    # --full-refresh loads it again although it is unchanged, and the metastore takes the replaced
    # table without a word (profiles.yml: Hive's column type check, which logged a stack trace)
    before = len(versions())
    with jvm_log() as logged:
        project.dbt("seed", "--select", "cdc_table_keys", "--full-refresh")
    assert len(versions()) == before + 1
    assert [line for line in logged if "alter table" in line.lower()] == []


def test_an_unchanged_view_is_left_and_an_incremental_table_is_checked_against_its_query(project) -> None:
    """The project's view and incremental materializations (macros/materializations/): a run leaves a
    view whose query is unchanged as it is (no statement, no new view), and creates again one whose
    stored fingerprint differs; an incremental model (on_schema_change fail) whose table no longer has
    the columns of its query (one more, one of another type) stops, naming the column, before it
    writes; the same columns in another order are written by name."""
    view = "{schema}.cdc_kafka_gaps"

    def run_view(*args: str) -> list[str]:
        return [node.message for node in project.dbt("run", "--select", "cdc_kafka_gaps", *args).result]

    assert run_view() != ["UNCHANGED"]
    assert run_view() == ["UNCHANGED"]
    project.query(f"alter view {view} set tblproperties ('cdc.view_fingerprint' = 'stale')")
    assert run_view() != ["UNCHANGED"]
    assert dict(project.query(f"show tblproperties {view}"))["cdc.view_fingerprint"] != "stale"
    assert run_view("--full-refresh") != ["UNCHANGED"]

    project.land("dataworks_json", PROJECT_ROOT / "sample_data" / "dataworks_json")
    records = ("build", "--select", "+int_cdc_records", "--exclude-resource-type", "test", "unit_test")
    project.dbt(*records)
    project.query("alter table {schema}.int_cdc_records add columns (added_by_hand string)")
    result = project.dbt(*records, check=False)
    assert not result.success
    (failed,) = [node for node in result.result if node.node.name == "int_cdc_records"]
    assert "added_by_hand: string in the table, absent in the query" in failed.message
    assert "--full-refresh" in failed.message

    # a stored column of another type (as an older version's hex text): stopped, the column named
    stored = "{schema}.int_cdc_records"
    rebuilt = f"create or replace table {stored} using delta partitioned by (load_batch_id) as select * except"
    hex_text = "hex(record_fingerprint) as record_fingerprint"
    project.query(f"{rebuilt} (added_by_hand, record_fingerprint), {hex_text} from {stored}")
    commits = len(project.query(f"describe history {stored}"))
    result = project.dbt(*records, check=False)
    (failed,) = [node for node in result.result if node.node.name == "int_cdc_records"]
    assert not result.success
    assert "record_fingerprint: string in the table, binary in the query" in failed.message
    assert len(project.query(f"describe history {stored}")) == commits, "nothing is written before the check"
    # the same columns in another order are no difference: written by name
    project.query(f"{rebuilt} (record_fingerprint), unhex(record_fingerprint) as record_fingerprint from {stored}")
    assert project.dbt(*records).success
    ((records_stored, fingerprints),) = project.query(
        f"select count(*), count_if(length(record_fingerprint) = 16) from {stored}"
    )
    assert records_stored > 0 and fingerprints == records_stored


def test_a_history_stored_by_other_key_buckets_stops_an_incremental_build(project) -> None:
    """cdc_history records the var cdc_key_buckets it was built with (property cdc.key_buckets): an
    incremental build with another number stops before its MERGE, naming both and the full refresh,
    which stores the same versions by the new number."""
    history_table = "{schema}.cdc_history"
    project.land("dataworks_json", PROJECT_ROOT / "sample_data" / "dataworks_json")
    project.build("--vars", "{cdc_key_buckets: 4}", tests=False)
    built = project.history()
    assert dict(project.query(f"show tblproperties {history_table}"))["cdc.key_buckets"] == "4"
    buckets = project.query(f"select distinct history_partition from {history_table} where is_current")
    assert len(buckets) > 1, "the sample's keys fall in one of four buckets: the check below would prove little"

    result = project.dbt("build", "--select", "cdc_history", "--exclude-resource-type", "test", check=False)
    assert not result.success
    (failed,) = [node for node in result.result if node.node.name == "cdc_history"]
    assert "in 4 key buckets" in failed.message
    assert "var cdc_key_buckets is 1" in failed.message
    assert "--full-refresh" in failed.message
    assert project.history() == built
    # a table made before the property existed was built with 64 buckets, the default then
    project.query(f"alter table {history_table} unset tblproperties ('cdc.key_buckets')")
    result = project.dbt("build", "--select", "cdc_history", "--exclude-resource-type", "test", check=False)
    (failed,) = [node for node in result.result if node.node.name == "cdc_history"]
    assert "in 64 key buckets (built before it recorded the number" in failed.message

    project.build("--full-refresh", tests=False)
    assert dict(project.query(f"show tblproperties {history_table}"))["cdc.key_buckets"] == "1"
    assert project.query(f"select distinct history_partition from {history_table} where is_current") == [(0,)]
    assert project.history() == built


def results_attached_to(results: dict[str, object], attached: str) -> list[object]:
    """The data test results of `results` ({unique id: result}) attached to node `attached`."""
    return [node for node in results.values() if getattr(node.node, "attached_node", None) == attached]


def test_a_build_sends_nothing_for_what_it_did_not_write(project, tmp_path: Path) -> None:
    """A build writes nothing to a model its new batches give nothing (cdc_heartbeats without a
    heartbeat, int_cdc_key_changes without a key change to carry) and sends no query for the data
    tests of what it did not write; what it wrote is tested. Its insert overwrites replace only
    the partitions they write, whatever the session's partition overwrite mode."""
    changes = Scenario(
        seed=7, tables=2, keys=12, events=120, ddl_every=0, heartbeat_every=0, transaction_markers=False
    ).generate()
    first, second = write_stream(changes, "dataworks_json", tmp_path / "stream", files=2, seed=7)
    skip = ("--exclude-resource-type", "unit_test", "--exclude", "path:models/marts/typed")
    project.land("dataworks_json", first)
    project.dbt("build", *skip, "--exclude-resource-type", "test")
    project.land("dataworks_json", second)
    # in a session whose partition overwrite mode is static (a server someone else started), each
    # insert overwrite still replaces only its partitions: it says dynamic itself
    project.query("set spark.sql.sources.partitionOverwriteMode = STATIC")
    try:
        built = {node.node.unique_id: node for node in project.dbt("build", *skip).result}
    finally:
        project.query("set spark.sql.sources.partitionOverwriteMode = DYNAMIC")
    for table in ("raw_cdc_messages", "int_cdc_records", "cdc_events", "cdc_load_batches"):
        assert project.query(f"select count(distinct load_batch_id) from {{schema}}.{table}") == [(2,)], table

    assert built["model.cdc.cdc_heartbeats"].message == "NO NEW HEARTBEAT RECORDS"
    assert built["model.cdc.int_cdc_key_changes"].message == "NOTHING NEW"
    for skipped in ("model.cdc.cdc_heartbeats", "model.cdc.int_cdc_key_changes"):
        (test,) = results_attached_to(built, skipped)
        assert str(test.status) == "pass" and test.adapter_response.get("_message") == NOT_SENT, (skipped, test)
    for written in ("model.cdc.cdc_events", "model.cdc.cdc_history"):
        (test,) = results_attached_to(built, written)
        assert test.adapter_response.get("_message") != NOT_SENT, (written, test)
    # the intermediate tables' tests check whole tables (a first or full build, cdc_test_scope all):
    # what an incremental build writes there is checked downstream (cdc_events, cdc_history, the
    # conservation test)
    (records_test,) = results_attached_to(built, "model.cdc.int_cdc_records")
    assert records_test.adapter_response.get("_message") == NOT_SENT
    whole = project.dbt(
        "test", "--select", "int_cdc_records", "int_cdc_touched_keys", "--vars", "{cdc_test_scope: all}"
    ).result
    intermediate = ("model.cdc.int_cdc_records", "model.cdc.int_cdc_touched_keys")
    assert sorted(
        (test.node.attached_node, str(test.status), test.adapter_response.get("_message") != NOT_SENT)
        for test in whole
        if getattr(test.node, "attached_node", None) in intermediate
    ) == [(node, "pass", True) for node in intermediate]
    # the touched keys are compiled into cdc_history's queries (ephemeral): no table of them
    assert project.query("show tables in {schema} like 'int_cdc_touched_keys'") == []
    # without a Kafka load there is no removed offset to look for: that singular test sends nothing either
    gaps = built["test.cdc.assert_no_versions_removed_before_landing"]
    assert str(gaps.status) == "pass" and gaps.adapter_response.get("_message") == NOT_SENT
    # cdc_stream_progress aggregates every change (where: __cdc_run_whole__): an incremental build
    # leaves its test out, a whole-table check runs it
    (progress,) = results_attached_to(built, "model.cdc.cdc_stream_progress")
    assert progress.adapter_response.get("_message") == NOT_SENT
    whole = project.dbt("test", "--select", "cdc_stream_progress", "--vars", "{cdc_test_scope: all}").result
    assert [str(test.status) for test in whole] == ["pass"]
    assert whole[0].adapter_response.get("_message") != NOT_SENT


def test_a_seeds_test_runs_until_it_passes_on_the_seeds_rows(project) -> None:
    """A seed's data test that passed marks the seed's table (cdc.seed_tested.*, at the seed's
    fingerprint): a build that finds the seed unchanged sends no query for it. A test not so
    marked, or that fails, runs on every build."""
    seed = "seed.cdc.cdc_table_keys"
    table = "{schema}.cdc_table_keys"

    def build() -> object:
        (test,) = results_attached_to(
            {
                node.node.unique_id: node
                for node in project.dbt("build", "--select", "cdc_table_keys", check=False).result
            },
            seed,
        )
        return test

    def marks() -> tuple[str | None, set[str]]:
        """The seed's fingerprint, and the fingerprints its tests are marked passed at."""
        properties = dict(project.query(f"show tblproperties {table}"))
        tested = {value for name, value in properties.items() if name.startswith("cdc.seed_tested.")}
        return properties.get("cdc.seed_fingerprint"), tested

    def set_marks(value: str) -> None:
        for name, _ in project.query(f"show tblproperties {table}"):
            if name.startswith("cdc.seed_tested."):
                project.query(f"alter table {table} set tblproperties ('{name}' = '{value}')")

    assert build().adapter_response.get("_message") != NOT_SENT
    fingerprint, tested = marks()
    assert fingerprint is not None and tested == {fingerprint}
    test = build()
    assert str(test.status) == "pass" and test.adapter_response.get("_message") == NOT_SENT
    # a build of the test without its seed (as cdc-run's second step runs it) reads the marks itself
    (alone,) = project.dbt("build", "--select", test.node.name).result
    assert str(alone.status) == "pass" and alone.adapter_response.get("_message") == NOT_SENT
    # ... and runs it when the table's rows were loaded from another file (the seed not loaded again)
    project.query(f"alter table {table} set tblproperties ('cdc.seed_fingerprint' = 'another file')")
    (alone,) = project.dbt("build", "--select", test.node.name).result
    assert str(alone.status) == "pass" and alone.adapter_response.get("_message") != NOT_SENT
    assert marks() == ("another file", {"another file"})  # passed on the rows it read
    assert build().adapter_response.get("_message") != NOT_SENT  # the seed is loaded again, and tested
    assert marks() == (fingerprint, {fingerprint})

    set_marks("stale")
    assert build().adapter_response.get("_message") != NOT_SENT
    assert marks() == (fingerprint, {fingerprint})

    # a test that fails leaves no mark: the next build runs it again
    set_marks("stale")
    copies = "('copied.table', '[\"id\"]', 'a'), ('copied.table', '[\"id\"]', 'b')"
    project.query(f"insert into {table} values {copies}")
    for _ in range(2):
        assert str(build().status) == "fail"
        assert marks()[1] == {"stale"}


def test_the_op_codes_check_runs_until_it_passes_on_the_seed_and_the_var(project) -> None:
    """assert_format_ops_are_op_codes reads seed cdc_op_codes and the ops that var cdc_formats
    renders into its SQL: a build that finds both as they were when it passed sends no query for
    it; another value of the var runs it again (here it fails: an op the seed lacks)."""

    def check(*args: str) -> object:
        results = project.dbt("build", "--select", "cdc_op_codes", "assert_format_ops_are_op_codes", *args, check=False)
        (test,) = [result for result in results.result if result.node.name == "assert_format_ops_are_op_codes"]
        return test

    first = check()
    assert str(first.status) == "pass" and first.adapter_response.get("_message") != NOT_SENT
    again = check()
    assert str(again.status) == "pass" and again.adapter_response.get("_message") == NOT_SENT
    formats = project_formats()
    formats["debezium_json"]["ops"]["delete"] = "removed"  # a vendor op no row of the seed has
    changed = check("--vars", json.dumps({"cdc_formats": formats}))
    assert (str(changed.status), changed.failures) == ("fail", 1)


# what a project's Spark runs in a process whose time zone is not UTC: its JVM's time zone, and
# whether Delta then checks every commit's file list against the table's log (Snapshot's
# allFilesInCrcVerificationForceEnabled: two Spark jobs and ~0.5 s a commit)
SPARK_IN_ANOTHER_TIME_ZONE = """
import json
from cdc_dbt_spark.connection import local_spark
spark = local_spark()
jvm = spark.sparkContext._jvm
snapshot = getattr(getattr(jvm.org.apache.spark.sql.delta, "Snapshot$"), "MODULE$")
print(json.dumps({
    "jvm_time_zone": jvm.java.util.TimeZone.getDefault().getID(),
    "commits_check_file_lists": snapshot.allFilesInCrcVerificationForceEnabled(spark._jsparkSession),
}))
"""


def _printed_by_spark_script(script: str, spark_home: Path, **environment: str) -> dict:
    """The JSON a Python script prints last, run in a process of its own (a Spark of its own, its
    metastore under spark_home) with the suite's environment and these variables."""
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        env={**os.environ, **environment, "CDC_SPARK_HOME": str(spark_home)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_spark_runs_in_utc_where_the_machine_does_not(tmp_path: Path) -> None:
    """profiles.yml starts every JVM with -Duser.timezone=UTC: in a process whose time zone is
    UTC+8 (TZ=Asia/Shanghai, where many of the vendors' users are), Spark's JVM still runs in
    UTC, so Delta does not check each commit's file list against the table's log."""
    found = _printed_by_spark_script(SPARK_IN_ANOTHER_TIME_ZONE, tmp_path / "spark", TZ="Asia/Shanghai")
    assert found == {"jvm_time_zone": "UTC", "commits_check_file_lists": False}


# a process whose Spark session has no Hive metastore (local_spark's, as a load through the Thrift
# server makes) then connects to the local target: the session's catalog before and after
HIVE_AFTER_A_SESSION_WITHOUT_IT = """
import json
from cdc_dbt_spark.connection import connect, local_spark
before = local_spark().conf.get("spark.sql.catalogImplementation")
after = connect("local")._spark.conf.get("spark.sql.catalogImplementation")
print(json.dumps({"before": before, "after": after}))
"""


def test_a_session_without_hive_gives_way_to_the_targets_connection(tmp_path: Path) -> None:
    """connect() replaces a process's session that has no Hive metastore with the target's: Spark
    checks a default given to conf.get against the setting's values, so asking with '' failed
    (INVALID_CONF_VALUE) where the setting is unset."""
    found = _printed_by_spark_script(HIVE_AFTER_A_SESSION_WITHOUT_IT, tmp_path / "spark")
    assert found == {"before": "in-memory", "after": "hive"}
