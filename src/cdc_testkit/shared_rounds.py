"""Scenarios of many tests in one project, built together: land each scenario's first loads, build once,
land their second loads, build once, and so on; then each test reads back its own scenario's rows.

A build's fixed cost, not its data, is most of what a small scenario costs (a few seconds of Spark work per
statement whatever the rows): nine formats' scenarios built together take the builds of one. A scenario is
a function of a folder that writes its messages and returns its loads, round by round:

    def loads(folder: Path) -> Rounds:
        first = write_jsonl(folder / "load1.jsonl", [...])
        return [[("cdl_json", first)], [("cdl_json", write_jsonl(folder / "load2.jsonl", [...])), ("cdl_json", first)]]

    @pytest.mark.shared_rounds(scenario=loads)
    def test_stream(shared: ScenarioView) -> None:
        assert shared.current() == [...]

A scenario whose tables need a var says so: shared_rounds(scenario=loads, vars={...}); every build of
the shared project has the vars of all its scenarios (the same var with two values is an error).

Each load is a call of the loader, and its landing batches are the scenario's: every table with a
load_batch_id is read back filtered by them, and cdc_history and cdc_current by the tables those batches
hold (a table two scenarios land is an error that names both). Data tests run in the last round's build,
over whole tables; then a full refresh rebuilds everything (refreshed_history and refreshed_current are
what it built). A scenario that needs vars or a failing build, or changes tables, keeps its own project.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cdc_dbt_spark.loader import iter_files
from cdc_testkit.harness import Project

# a load: the format, then the files the loader is given in one call
Load = tuple[str, *tuple[Path | str, ...]]
Rounds = list[list[Load]]
Scenario = Callable[[Path], Rounds]

# the tables without a load_batch_id: read by the tables the scenario's batches hold
BY_TABLE = ("cdc_history", "cdc_current")
TABLE_REFERENCE = re.compile(r"\{schema\}\.(\w+)")


@dataclass
class ScenarioView:
    """What one scenario's tests read of the shared project: Project's history(), current() and query(),
    over the scenario's rows only."""

    name: str
    project: Project
    batches: set[int] = field(default_factory=set)
    tables: set[str] = field(default_factory=set)
    # per round, per load: what the loader said (files, messages, batches...)
    landed: list[list[dict[str, int]]] = field(default_factory=list)
    # per round: history() and current() as they were after that round's build
    histories: list[list[tuple]] = field(default_factory=list)
    currents: list[list[tuple]] = field(default_factory=list)
    # the same after the full refresh that follows the last round
    refreshed_history: list[tuple] = field(default_factory=list)
    refreshed_current: list[tuple] = field(default_factory=list)

    def history(self, after_round: int = -1) -> list[tuple]:
        """After the given round's build (by default the last one's)."""
        return self.histories[after_round]

    def current(self, after_round: int = -1) -> list[tuple]:
        return self.currents[after_round]

    def query(self, sql: str) -> list[tuple]:
        """`sql` as Project.query takes it, each `{schema}.<table>` read as the scenario's rows of it."""

        def scenario_rows(reference: re.Match) -> str:
            table = reference.group(1)
            if table in BY_TABLE:
                keep = f"table_id in ({_listed(self.tables)})"
            else:
                keep = f"load_batch_id in ({', '.join(map(str, sorted(self.batches))) or 'null'})"
            return f"(select * from {{schema}}.{table} where {keep}) as {table}"

        return self.project.query(TABLE_REFERENCE.sub(scenario_rows, sql))


def _listed(values: set[str]) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in sorted(values)) or "null"


def build_rounds(
    project: Project, scenarios: dict[str, Scenario], folder: Path, dbt_vars: dict | None = None
) -> dict[str, ScenarioView]:
    """Lands and builds every scenario's rounds in `project`, each build with `dbt_vars` (the vars the
    scenarios need, each about its own tables); returns each scenario's view, by name."""
    with_vars = ("--vars", json.dumps(dbt_vars)) if dbt_vars else ()
    rounds = {name: scenario(folder / name) for name, scenario in scenarios.items()}
    views = {name: ScenarioView(name, project) for name in scenarios}
    last_round = max(len(loads) for loads in rounds.values()) - 1
    landed_up_to = -1
    for number in range(last_round + 1):
        scenario_of_file: dict[str, str] = {}
        for name, loads in rounds.items():
            view = views[name]
            view.landed.append([])
            for source_format, *paths in loads[number] if number < len(loads) else []:
                view.landed[number].append(project.land(source_format, *paths))
                for path in iter_files(map(str, paths)):
                    assert scenario_of_file.setdefault(str(path), name) == name, (
                        f"{path} is landed by scenarios {scenario_of_file[str(path)]} and {name} in one round"
                    )
        # the round's batches by the scenario whose files they hold (one query, not one per load)
        for batch, source_file in project.query(
            "select distinct load_batch_id, source_file from {schema}.raw_cdc_messages "
            f"where load_batch_id > {landed_up_to}"
        ):
            views[scenario_of_file[source_file]].batches.add(batch)
            landed_up_to = max(landed_up_to, batch)
        project.build(*with_vars, tests=number == last_round)
        owners = _table_owners(project, views)
        history, current = project.history(), project.current()
        for name, view in views.items():
            view.tables = {table for table, owner in owners.items() if owner == name}
            view.histories.append([row for row in history if row[0] in view.tables])
            view.currents.append([row for row in current if row[0] in view.tables])
    project.build("--full-refresh", *with_vars, tests=False)
    history, current = project.history(), project.current()
    for view in views.values():
        view.refreshed_history = [row for row in history if row[0] in view.tables]
        view.refreshed_current = [row for row in current if row[0] in view.tables]
    return views


def _table_owners(project: Project, views: dict[str, ScenarioView]) -> dict[str, str]:
    """Each table the events hold, by the scenario whose batches hold it."""
    scenario_of_batch = {batch: name for name, view in views.items() for batch in view.batches}
    owners: dict[str, str] = {}
    for table, batch in project.query("select distinct table_id, load_batch_id from {schema}.cdc_events"):
        owner = scenario_of_batch[batch]
        assert owners.setdefault(table, owner) == owner, (
            f"table {table} is landed by scenarios {owners[table]} and {owner}: give one of them other table names"
        )
    return owners
