"""The suite's pytest hooks and fixtures; the harness itself is cdc_testkit.harness.

Each test process (each pytest-xdist worker) gets its own Spark warehouse and metastore, dbt
target and logs; each scenario its own schema.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from dbt_common.tests import enable_test_caching

from cdc_testkit import TEST_JAVA_OPTIONS
from cdc_testkit.harness import PROJECT_ROOT, THIRDPARTY, Project
from cdc_testkit.shared_rounds import ScenarioView, build_rounds


def pytest_configure(config: pytest.Config) -> None:
    if not THIRDPARTY.is_dir():
        raise pytest.UsageError(
            f"the tests read third-party samples from ../shared/thirdparty beside the checkout: "
            f"no shared/thirdparty in any folder above {PROJECT_ROOT}"
        )
    artifacts = PROJECT_ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    # each process that runs tests (each pytest-xdist worker) has its own Spark warehouse and
    # metastore, dbt target and logs; the workers inherit the controller's environment, so the
    # worker id is part of every path
    worker = f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}"
    os.environ["CDC_SPARK_HOME"] = str(artifacts / f"spark-{worker}")
    Project.targets = artifacts / f"target-{worker}"
    os.environ["DBT_TARGET_PATH"] = str(Project.targets)  # dbt runs outside a Project
    os.environ["DBT_LOG_PATH"] = str(artifacts / f"logs-{worker}")
    os.environ.setdefault("CDC_SHUFFLE_PARTITIONS", "4")
    # a Delta table's state in one task (profiles.yml): the tests' tables hold a few files, and
    # each first read of a table after a commit runs Delta's jobs over that state (small builds,
    # two projects of three builds each, alternated six times: 116.9 s against 123.1 s, medians;
    # the Spark jobs' own seconds 26.5 against 30.1)
    os.environ.setdefault("CDC_SNAPSHOT_PARTITIONS", "1")
    # the kit's JVM options (profiles.yml), inherited by the processes the tests start
    os.environ.setdefault("CDC_DRIVER_JAVA_OPTIONS", TEST_JAVA_OPTIONS)
    # interpreted expressions (profiles.yml): over the tests' few hundred rows, compiling each
    # query's code costs more than it saves (four small builds: 90 s against 103 s). The demo's
    # test runs what users run, with CDC_ variables unset: compiled code
    os.environ.setdefault("CDC_CODEGEN", "false")
    # no adaptive execution (profiles.yml): on the tests' tables each stage's own job costs
    # more than re-planning gains (the shared rounds' second build, replayed: 280 jobs against
    # 170, 152 s against 146 on average, cdc_history 58 s against 49). The demo's test keeps
    # it, as users run
    os.environ.setdefault("CDC_ADAPTIVE", "false")
    os.environ["CDC_TARGET"] = "local"
    os.environ["CDC_TEST_SEEDS"] = "true"  # seeds/testing: keys of the tables the tests make up
    # Jinja's parse of each macro and model text kept for the process, as dbt's own test fixtures keep
    # it (dbt.tests.fixtures.project): a test process parses the whole project again for every new
    # schema and every change of vars (39-41 times in a run of the fast tier), and parsing the same
    # ~660 macros' text is most of it (full parses in the fast tier: 4.2 s on average without, 2.3 s with)
    enable_test_caching()
    os.chdir(PROJECT_ROOT)


@pytest.fixture
def project() -> Iterator[Project]:
    yield Project(f"t_{uuid.uuid4().hex[:10]}")


@pytest.fixture
def new_project():
    """A factory of projects, each in a schema of its own."""

    def make(target: str = "local") -> Project:
        return Project(f"t_{uuid.uuid4().hex[:10]}", target)

    return make


def _scenario_name(marker: pytest.Mark) -> str:
    scenario = marker.kwargs["scenario"]
    return f"{scenario.__module__}.{scenario.__name__}"


@pytest.fixture(scope="session")
def shared_rounds(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ScenarioView]:
    """The scenarios of every test marked shared_rounds in this session, landed and built together in
    one project (cdc_testkit.shared_rounds), once, with the vars they name; by scenario name."""
    scenarios, dbt_vars, named_by = {}, {}, {}
    for item in request.session.items:
        if marker := item.get_closest_marker("shared_rounds"):
            name = _scenario_name(marker)
            scenarios[name] = marker.kwargs["scenario"]
            for var, value in marker.kwargs.get("vars", {}).items():
                if dbt_vars.setdefault(var, value) != value:
                    raise pytest.UsageError(f"shared_rounds: var {var} differs in {named_by[var]} and {name}")
                named_by.setdefault(var, name)
    project = Project(f"t_shared_{uuid.uuid4().hex[:6]}")
    return build_rounds(project, scenarios, tmp_path_factory.mktemp("shared"), dbt_vars)


@pytest.fixture
def shared(request: pytest.FixtureRequest, shared_rounds: dict[str, ScenarioView]) -> ScenarioView:
    """This test's scenario (its shared_rounds marker) as built with the others'."""
    return shared_rounds[_scenario_name(request.node.get_closest_marker("shared_rounds"))]


# The pytest-xdist workers take work in collection order, so the slowest work comes first and
# none of it starts last and runs alone (as measured by the tiers' --durations). The end-to-end tier
# hands out whole modules (--dist loadfile: a module's broker, cluster or server is started once);
# the fast tier single tests, and the shared_rounds tests as one group (--dist loadgroup)
SLOWEST_FIRST = (
    # end to end
    "test_faults.py",
    "test_cluster_target.py",
    "test_kafka.py",
    "test_demo_docs_freshness.py",
    "test_thrift_target.py",
    # fast
    "shared_rounds",
    "test_typed_tables.py::test_typed_tables_follow_declared_columns",
    "test_delta_tables.py::test_restore_undoes_a_build_and_maintain_changes_no_row",
    "test_runner.py::test_once_lands_every_source_and_builds_every_batch_not_built",
    "test_invariants.py::test_data_tests_check_the_latest_run_or_everything",
    "test_bad_input.py",
    "test_debezium_json.py::test_third_party_fixtures",
    "test_shareplex_json.py::test_a_chain_of_key_changes_is_followed_within_its_limit",
    "test_invariants.py::test_late_event_is_placed_by_its_sequence",
    "test_loader_project.py",
)


def _slowness_rank(item: pytest.Item, rank: dict[str, int]) -> int:
    test = f"{item.path.name}::{item.originalname}"
    group = "shared_rounds" if item.get_closest_marker("shared_rounds") else None
    return min(rank.get(name, len(rank)) for name in (test, item.path.name, group))


# tiers (pyproject.toml's markers): a test that needs a service of its own is end to end, and a
# test that builds a project, or is end to end, starts Spark
SERVICES = ("kafka", "thrift", "cluster")
PROJECT_FIXTURES = ("project", "new_project", "shared")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(service) for service in SERVICES):
            item.add_marker(pytest.mark.e2e)
        if item.get_closest_marker("e2e") or any(name in item.fixturenames for name in PROJECT_FIXTURES):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("shared_rounds"):  # one worker builds them all (--dist loadgroup)
            item.add_marker(pytest.mark.xdist_group("shared_rounds"))
    rank = {name: number for number, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: _slowness_rank(item, rank))  # stable: a module's order stays


@pytest.hookimpl(trylast=True)  # after pytest-xdist has put the group in each node id
def pytest_collection_finish(session: pytest.Session) -> None:
    """With --dist loadgroup a worker reports each test with its group (test@shared_rounds); where
    that fails (pytest-xdist and pytest out of step), each worker would build the shared project."""
    if not getattr(session.config.option, "loadgroup", False):  # set on the workers only
        return
    ungrouped = [
        item.nodeid
        for item in session.items
        if item.get_closest_marker("shared_rounds") and not item.nodeid.endswith("@shared_rounds")
    ]
    if ungrouped:
        raise pytest.UsageError(
            f"pytest-xdist did not group {ungrouped[0]} with the other shared_rounds tests "
            "(pytest and pytest-xdist out of step: requirements.txt pins them)"
        )
