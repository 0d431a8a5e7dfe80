"""The suite's pytest hooks and fixtures; the harness itself is cdc_testkit.harness.

Each test process (each pytest-xdist worker) gets its own Spark warehouse and metastore, dbt
target and logs; each scenario its own schema.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from cdc_testkit import TEST_JAVA_OPTIONS
from cdc_testkit.harness import PROJECT_ROOT, THIRDPARTY, Project


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
    # the kit's JVM options (profiles.yml), inherited by the processes the tests start
    os.environ.setdefault("CDC_DRIVER_JAVA_OPTIONS", TEST_JAVA_OPTIONS)
    # interpreted expressions (profiles.yml): over the tests' few hundred rows, compiling each
    # query's code costs more than it saves (four small builds: 90 s against 103 s). The demo's
    # test runs what users run, with CDC_ variables unset: compiled code
    os.environ.setdefault("CDC_CODEGEN", "false")
    os.environ["CDC_TARGET"] = "local"
    os.environ["CDC_TEST_SEEDS"] = "true"  # seeds/testing: keys of the tables the tests make up
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


# pytest-xdist (--dist loadfile) hands the two workers whole modules in collection order: the
# slowest modules first, so that none of them starts last and runs alone (slowest first, as
# measured by the suite's --durations)
SLOWEST_MODULES = (
    "test_faults.py",
    "test_cluster_target.py",
    "test_invariants.py",
    "test_canal_json.py",
    "test_typed_tables.py",
    "test_thrift_target.py",
    "test_runner.py",
    "test_kafka.py",
    "test_demo_docs_freshness.py",
    "test_bad_input.py",
)


# tiers (pyproject.toml's markers): a test that needs a service of its own is end to end, and a
# test that builds a project, or is end to end, starts Spark
SERVICES = ("kafka", "thrift", "cluster")
PROJECT_FIXTURES = ("project", "new_project")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(service) for service in SERVICES):
            item.add_marker(pytest.mark.e2e)
        if item.get_closest_marker("e2e") or any(name in item.fixturenames for name in PROJECT_FIXTURES):
            item.add_marker(pytest.mark.slow)
    rank = {name: number for number, name in enumerate(SLOWEST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a module's order stays
