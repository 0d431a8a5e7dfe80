"""The contract's invariants on generated streams, for every format the generator can write.

Seeded scenarios (many tables and keys, inserts, updates, deletes, re-inserts, key changes,
truncates, DDL, heartbeats, transaction markers, equal timestamps) are rendered in each
format. One project lands everything once and builds once; the shared project (the format
modules' scenarios' too, cdc_testkit.shared_rounds) lands the same messages shuffled, with
duplicates, split into several loads each followed by a build. Both must give exactly the same
history and current state, and agree with a replay in Python.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from cdc_dbt_spark.loader import project_formats
from cdc_testkit.encoders import CANNOT_TRUNCATE, ENCODERS
from cdc_testkit.harness import NOT_SENT, write_jsonl
from cdc_testkit.oracle import expected_state
from cdc_testkit.scenario import Scenario
from cdc_testkit.shared_rounds import Load, Rounds, ScenarioView
from cdc_testkit.stream import write_stream

SEEDS = (11, 12, 13)
LOADS = 3


def scenario_changes(source_format: str, seed: int):
    truncate_every = 0 if source_format in CANNOT_TRUNCATE else 113
    scenario = Scenario(seed=seed, tables=3, keys=15, events=240, truncate_every=truncate_every, ddl_every=57)
    changes = scenario.generate()
    # each format and seed in its own database, so that one build checks them all
    return [replace(change, database=f"{source_format}_s{seed}") for change in changes]


def formats_under_test() -> list[str]:
    return [name for name in ENCODERS if name in project_formats()]


def ordered_and_split(folder: Path) -> tuple[dict[str, list[Path]], list[list[Load]]]:
    """Every format's scenarios written twice: in commit order, one file per seed and format; and
    shuffled with duplicates, split into LOADS loads (per load, a landing of each format's files
    of every seed, then the first format's first file again: it lands nothing)."""
    ordered: dict[str, list[Path]] = {}
    loads: list[list[Load]] = [[] for _ in range(LOADS)]
    for source_format in formats_under_test():
        varied: list[list[Path]] = [[] for _ in range(LOADS)]
        for seed in SEEDS:
            changes = scenario_changes(source_format, seed)
            ordered.setdefault(source_format, []).extend(
                write_stream(changes, source_format, folder / "ordered" / source_format, seed=seed, shuffle=False)
            )
            shuffled_loads = write_stream(
                changes,
                source_format,
                folder / "varied" / source_format,
                files=LOADS,
                seed=seed,
                duplicate_share=0.15,
                shuffle=True,
            )
            for load, path in enumerate(shuffled_loads):
                varied[load].append(path)
        for load, paths in enumerate(varied):
            loads[load].append((source_format, *paths))
    first_format, *first_paths = loads[0][0]
    for load in loads:
        load.append((first_format, first_paths[0]))
    return ordered, loads


def split_loads(folder: Path) -> Rounds:
    return ordered_and_split(folder)[1]


# the shared project stores current versions in 8 key buckets (every shared scenario's builds do),
# the reference in one, the default: the same history either way
@pytest.mark.shared_rounds(scenario=split_loads, vars={"cdc_key_buckets": 8})
def test_any_order_any_split_same_history(
    shared: ScenarioView, shared_rounds: dict[str, ScenarioView], new_project, tmp_path: Path
) -> None:
    """The split loads are built with the format modules' scenarios (cdc_testkit.shared_rounds): a
    build after each load, data tests in the last, then a full refresh."""
    reference = new_project()
    ordered, _loads = ordered_and_split(tmp_path)
    oracle = {
        f"{source_format}_s{seed}": expected_state(scenario_changes(source_format, seed))
        for source_format in formats_under_test()
        for seed in SEEDS
    }
    for source_format, paths in ordered.items():
        reference.land(source_format, *paths)
    reference.build(tests=False)  # the data tests run on the shared project's last build

    # the replay in Python agrees with the SQL models; a source may name more than database and
    # table (Debezium's PostgreSQL connector: db.schema.table), the scenario's database is next to last
    def scenario_table(table_id: str) -> tuple[str, str]:
        database, table = table_id.split(".")[-2:]
        return database, f"{database}.{table}"

    def by_scenario(rows: list[tuple]) -> dict[str, dict]:
        """(table_id, key_json, value) rows grouped per scenario database, keyed like the oracle."""
        grouped: dict[str, dict] = {database: {} for database in oracle}
        for table_id, key, value in rows:
            database, table = scenario_table(table_id)
            grouped[database][(table, tuple(json.loads(key).values()))] = value
        return grouped

    current_rows = by_scenario(
        reference.query("select table_id, key_json, to_json(row_image) from {schema}.cdc_current")
    )
    version_counts = by_scenario(
        reference.query("select table_id, key_json, count(*) from {schema}.cdc_history group by 1, 2")
    )
    for database, (current, versions) in oracle.items():
        got = {key: json.loads(image) for key, image in current_rows[database].items()}
        assert set(got) == set(current), database
        # `name` changes with every update, `region` never: a key change carries the row over
        # (SharePlex's update holds only the key and the changed columns)
        assert all(
            (got[key]["name"], got[key]["region"]) == (current[key]["name"], current[key]["region"]) for key in current
        ), database
        assert version_counts[database] == versions, database

    # any arrival order, duplicates, any split into loads each followed by a build; a file landed
    # again lands nothing (a run killed part-way and redone: test_faults.py)
    assert [landed[-1]["messages"] for landed in shared.landed] == [0] * LOADS
    assert shared.history() == reference.history()
    assert shared.current() == reference.current()

    # a full refresh rebuilds the same tables from raw_cdc_messages: these and every other
    # scenario built with them
    assert shared.refreshed_history == reference.history()
    assert shared.refreshed_current == reference.current()
    for name, view in shared_rounds.items():
        assert view.refreshed_history == view.history(), f"{name}: history after a full refresh"
        assert view.refreshed_current == view.current(), f"{name}: current after a full refresh"

    # conservation: every landed message is accounted for, per batch
    landed = shared.query("select count(*) from {schema}.raw_cdc_messages")[0][0]
    accounted = shared.query(
        "select sum(row_change_messages + ddl_messages + heartbeat_messages + transaction_messages "
        "+ quarantined_messages), sum(messages_landed), sum(quarantined_messages) from {schema}.cdc_load_batches"
    )[0]
    assert accounted == (landed, landed, 0)


def test_late_event_is_placed_by_its_sequence(project, tmp_path: Path) -> None:
    """An event older than versions already built goes where its sequence says."""
    from cdc_testkit.encoders import dataworks_json
    from cdc_testkit.scenario import Change

    def change(kind: str, sequence: int, before=None, after=None) -> Change:
        return Change(kind, "shop", "late", sequence, 1_600_000_000_000 + sequence, ("id",), before, after)

    first = [
        change("insert", 10, after={"id": 1, "v": "a"}),
        change("update", 30, {"id": 1, "v": "a"}, {"id": 1, "v": "c"}),
    ]
    late = [change("update", 20, {"id": 1, "v": "a"}, {"id": 1, "v": "b"})]
    project.land("dataworks_json", write_jsonl(tmp_path / "first.jsonl", [m for c in first for m in dataworks_json(c)]))
    project.land("dataworks_json", write_jsonl(tmp_path / "late.jsonl", [m for c in late for m in dataworks_json(c)]))

    def history() -> list[tuple]:
        return [
            (json.loads(row)["v"], current) for _t, _k, _n, _f, _to, current, _d, _o, row, _s, _e in project.history()
        ]

    # var cdc_max_batches_per_run: each run takes the oldest landed batch not yet processed
    one_batch = ("--vars", "{cdc_max_batches_per_run: 1}")
    project.build(*one_batch, tests=False)
    assert history() == [("a", False), ("c", True)]
    assert len(project.query("select * from {schema}.cdc_load_batches")) == 1
    project.build(*one_batch)
    assert history() == [("a", False), ("b", False), ("c", True)]
    assert project.current() == [("shop.late", '{"id":1}', '{"id":1,"v":"c"}')]


def test_data_tests_check_the_latest_run_or_everything(project, tmp_path: Path) -> None:
    """A build's data tests check the keys its run changed (var cdc_test_scope: run, the
    default), so that testing costs in proportion to the run; `all` checks whole tables."""
    from cdc_testkit.encoders import dataworks_json
    from cdc_testkit.scenario import Change

    def change(kind: str, sequence: int, before=None, after=None) -> Change:
        return Change(kind, "shop", "scoped", sequence, 1_600_000_000_000 + sequence, ("id",), before, after)

    loads = {
        "first": [change("insert", 10, after={"id": 1, "v": "a"}), change("insert", 11, after={"id": 2, "v": "a"})],
        # and a truncate of another table, after the update: it puts every key of that table in the scope
        "second": [
            change("update", 20, {"id": 2, "v": "a"}, {"id": 2, "v": "b"}),
            Change("truncate", "shop", "other", 30, 1_600_000_000_030),
        ],
    }
    for name, changes in loads.items():
        project.land(
            "dataworks_json", write_jsonl(tmp_path / f"{name}.jsonl", [m for c in changes for m in dataworks_json(c)])
        )
        project.build()
    # the second build's tests of cdc_events and cdc_history read the changed keys' rows from the
    # build's first new position on (meta cdc_run_from): a literal bound Delta skips older files by
    (second_position,) = project.query("select min(sequence_key) from {schema}.cdc_events where op = 'update'")[0]
    compiled = {
        path.name.split("_cdc_")[0]: path.read_text()
        for path in (project.targets / project.schema / "run").rglob("*.sql")
        if path.name.startswith(
            ("table_is_valid_cdc_events", "scd2_versions_are_valid_cdc_hi", "source_table_is_valid_cdc_land")
        )
    }
    assert f"`sequence_key` >= '{second_position}'" in compiled["table_is_valid"]
    assert f"`valid_to_sequence` >= '{second_position}'" in compiled["scd2_versions_are_valid"]
    # the tables the run truncates are the build's literal list (cdc_new_records_summary), not a second
    # read of its records
    for name in ("table_is_valid", "scd2_versions_are_valid"):
        assert "or table_id in ('shop.other')" in compiled[name]
        assert "op = 'truncate' and key_json is null" not in compiled[name]
    # and the landing table's test, the ids the second build's batch landed (meta cdc_run_message_range)
    first_id, last_id = project.query(
        "select min(message_id), max(message_id) from {schema}.raw_cdc_messages "
        "where load_batch_id = (select max(load_batch_id) from {schema}.raw_cdc_messages)"
    )[0]
    assert f"`message_id` between '{first_id}' and '{last_id}'" in compiled["source_table_is_valid"]

    def copy_current_version(key: int) -> None:
        project.query(
            "insert into {schema}.cdc_history select * from {schema}.cdc_history "
            f"where key_json = '{{{{\"id\":{key}}}}}' and is_current"
        )

    def failing_tests(*args: str) -> set[str]:
        result = project.dbt("test", "--select", "cdc_history", *args, check=False)
        return {test.node.name.split("_cdc_history")[0] for test in result.result if test.status == "fail"}

    broken_key_tests = {"scd2_versions_are_valid"}
    copy_current_version(1)  # a key the latest run did not change
    assert failing_tests() == set()
    assert failing_tests("--vars", "{cdc_test_scope: all}") == broken_key_tests
    copy_current_version(2)  # a key it changed
    assert failing_tests() == broken_key_tests

    # a build with nothing new processes nothing: no commit to the history, and its tests check
    # nothing (no row was written); a `dbt test` after it still checks the last run
    def history_versions() -> int:
        return len(project.query("describe history {schema}.cdc_history"))

    versions = history_versions()
    nothing_new = project.dbt("build", "--exclude-resource-type", "unit_test", "--exclude", "path:models/marts/typed")
    assert {test.status for test in nothing_new.result if test.node.resource_type == "test"} == {"pass"}
    assert history_versions() == versions
    assert failing_tests() == broken_key_tests

    # the required columns are checked in the same pass over the versions: a null names its column
    key_2 = "key_json = '{{\"id\":2}}'"
    project.query(f"update {{schema}}.cdc_history set is_deleted = null where {key_2} and not is_current")
    result = project.dbt("test", "--select", "cdc_history", check=False)
    (test,) = [test for test in result.result if test.node.name.startswith("scd2_versions_are_valid")]
    escaped = test.node.compiled_code.replace("{", "{{").replace("}", "}}")  # Project.query formats
    violations = {row[0] for row in project.query(f"select violation from ({escaped})")}
    assert violations == {"null: is_deleted", "duplicate version"}  # key 2's current version has its copy
    # ... and a live version's row: cdc_current's rules, which a build checks here, not on the view
    live_row = "row_image = null, is_deleted = false"
    project.query(f"update {{schema}}.cdc_history set {live_row} where {key_2} and is_current")
    violations = {row[0] for row in project.query(f"select violation from ({escaped})")}
    assert violations == {"null: is_deleted", "null: row_image"}
    (view_test,) = project.dbt("test", "--select", "cdc_current", check=False).result
    assert view_test.status == "pass" and view_test.adapter_response.get("_message") == NOT_SENT
    (view_test,) = project.dbt("test", "--select", "cdc_current", "--vars", "{cdc_test_scope: all}", check=False).result
    assert view_test.status == "fail"

    # cdc_events' rules are one test (table_is_valid), one scan: each broken rule is a row of it
    def broken_event_rules(*args: str) -> set[tuple[str, str]]:
        result = project.dbt("test", "--select", "cdc_events", *args, check=False)
        (test,) = [test for test in result.result if test.node.name.startswith("table_is_valid_cdc_events")]
        if test.status != "fail":
            return set()
        escaped = test.node.compiled_code.replace("{", "{{").replace("}", "}}")  # Project.query formats
        return {tuple(row) for row in project.query(f"select rule, detail from ({escaped})")}

    key_1 = "key_json = '{{\"id\":1}}'"
    (event_id,) = project.query(f"select event_id from {{schema}}.cdc_events where {key_1}")[0]
    # a copy of key 1's event with an op no source has
    project.query(
        "insert into {schema}.cdc_events select event_id, source_format, table_id, key_json, 'upsert', "
        "before_image, after_image, after_image_is_partial, column_types, sequence_key, commit_ts, is_key_change, "
        f"message_id, key_bucket, load_batch_id from {{schema}}.cdc_events where {key_1}"
    )
    assert broken_event_rules() == set()  # key 1 is not the latest run's
    assert broken_event_rules("--vars", "{cdc_test_scope: all}") == {
        ("unique event_id", event_id),
        ("accepted_values op", "upsert"),
    }

    # conservation is one test of the run's batches: a landed message with no record, and a ledger
    # row whose counts do not add up, are each a row of it
    def conservation_problems() -> set[tuple[str, int]]:
        (test,) = project.dbt("test", "--select", "assert_every_landed_message_is_accounted", check=False).result
        if test.status != "fail":
            return set()
        escaped = test.node.compiled_code.replace("{", "{{").replace("}", "}}")  # Project.query formats
        return {tuple(row) for row in project.query(f"select problem, load_batch_id from ({escaped})")}

    assert conservation_problems() == set()
    (last_batch,) = project.query("select max(load_batch_id) from {schema}.cdc_load_batches")[0]
    # one more DDL message than the batch landed (it holds one: the truncate)
    project.query(
        f"update {{schema}}.cdc_load_batches set ddl_messages = ddl_messages + 1 where load_batch_id = {last_batch}"
    )
    assert conservation_problems() == {("ledger counts do not add up", last_batch)}
    project.query(f"delete from {{schema}}.int_cdc_records where load_batch_id = {last_batch}")
    assert conservation_problems() == {("ledger counts do not add up", last_batch), ("no record", last_batch)}

    # the landing table's test, in a build, reads every landed row whose id lies in the range of
    # the batches the build takes (no second scan for their ids): a message of the new batch landed
    # again in an earlier one is a duplicate it finds
    third = [change("update", 30, {"id": 1, "v": "a"}, {"id": 1, "v": "c"})]
    project.land("dataworks_json", write_jsonl(tmp_path / "third.jsonl", [m for c in third for m in dataworks_json(c)]))
    (first_batch,) = project.query("select min(load_batch_id) from {schema}.raw_cdc_messages")[0]
    columns = list(dict.fromkeys(row[0] for row in project.query("describe {schema}.raw_cdc_messages")))
    columns = [column for column in columns if column and not column.startswith("#")]
    copied = ", ".join(f"{first_batch} as load_batch_id" if column == "load_batch_id" else column for column in columns)
    project.query(
        f"insert into {{schema}}.raw_cdc_messages ({', '.join(columns)}) select {copied} "
        "from {schema}.raw_cdc_messages "
        "where load_batch_id = (select max(load_batch_id) from {schema}.raw_cdc_messages)"
    )
    (landing_test,) = [
        test
        for test in project.dbt("build", "--select", "source:cdc_landing.raw_cdc_messages", check=False).result
        if test.node.name.startswith("source_table_is_valid")
    ]
    assert landing_test.status == "fail"
    assert "`message_id` between" in landing_test.node.compiled_code
    assert "message_id in (select" not in landing_test.node.compiled_code
