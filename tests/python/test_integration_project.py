"""The SCD2 rules, one by one: the integration_tests/ dbt project (README: "Integration tests of
the SCD2 rules"). It installs this project as a local package and runs macro cdc_scd2_versions
over one input seed per rule; a test per rule compares the versions with an expected seed.

The build must succeed and each rule's comparison must have run and passed (a rule whose test
was left out, or a model without one, fails here); a copy of the project with one expected row
changed must fail that rule's comparison, so a passing comparison means something.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from cdc_testkit.harness import PROJECT_ROOT, Project

INTEGRATION = PROJECT_ROOT / "integration_tests"
RULES = {"ordering", "deletes", "partial_images", "truncates", "key_changes", "equal_timestamps"}


def _rule_tests(result) -> dict[str, list[tuple[str, int]]]:
    """Each rule's test results as (status, failures), by the rule's model."""
    tests: dict[str, list[tuple[str, int]]] = {}
    for run in result.result.results:
        node = run.node
        if node.resource_type == "test" and node.attached_node:
            model = node.attached_node.rsplit(".", 1)[-1]
            tests.setdefault(model.removeprefix("scd2_"), []).append((str(run.status), run.failures or 0))
    return tests


def test_rules_are_all_present() -> None:
    models = {path.stem.removeprefix("scd2_") for path in (INTEGRATION / "models" / "scd2").glob("scd2_*.sql")}
    seeds = {path.name for path in (INTEGRATION / "seeds").glob("data_scd2_*.csv")}
    assert models == RULES
    assert seeds == {f"data_scd2_{rule}{suffix}.csv" for rule in RULES for suffix in ("", "_expected")}


def test_every_scd2_rule_holds(project: Project) -> None:
    project.dbt("deps", project_dir=INTEGRATION)
    result = project.dbt("build", project_dir=INTEGRATION)
    tests = _rule_tests(result)
    assert set(tests) == RULES, tests
    for rule, outcomes in tests.items():
        assert outcomes == [("pass", 0)], (rule, outcomes)


def test_a_wrong_expected_row_fails_its_rule(project: Project, tmp_path: Path) -> None:
    copy = tmp_path / "integration_tests"
    shutil.copytree(INTEGRATION, copy, ignore=shutil.ignore_patterns("dbt_packages", "target", "logs", ".spark"))
    # the main project from this checkout, wherever the copy is
    (copy / "packages.yml").write_text(yaml.safe_dump({"packages": [{"local": str(PROJECT_ROOT)}]}))
    expected = copy / "seeds" / "data_scd2_ordering_expected.csv"
    lines = expected.read_text().splitlines()
    changed = [line.replace('"{""id"":1,""v"":""c""}"', '"{""id"":1,""v"":""x""}"') for line in lines]
    assert changed != lines
    expected.write_text("\n".join(changed) + "\n")

    project.dbt("deps", project_dir=copy)
    selected = ("--select", "+scd2_ordering+", "data_scd2_ordering_expected")
    result = project.dbt("build", *selected, project_dir=copy, check=False)
    assert not result.success
    # the one changed row: missing as expected, and produced but not expected
    assert _rule_tests(result) == {"ordering": [("fail", 2)]}
