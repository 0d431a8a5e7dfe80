"""The same project on a Spark standalone cluster (target `cluster`), started by scripts/cluster.py.

One cluster for the module (PostgreSQL metastore, master, two workers, Thrift server), on free
ports and with its state under artifacts/, stopped at the end whatever happened. The sample
messages of every format and one generated stream, landed in two loads (the second while a
build runs), are built on the cluster and on the embedded default: the same tables.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc_dbt_spark.connection import cluster_spark, connect
from cdc_dbt_spark.loader import land, project_formats
from cdc_testkit import TEST_JVM_OPTIONS
from cdc_testkit.harness import PROJECT_ROOT, Project
from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import write_stream

pytestmark = pytest.mark.cluster

SCRIPT = PROJECT_ROOT / "scripts" / "cluster.py"
STREAM_FORMAT = "dataworks_json"
STREAM_FILES = 8  # the first load lands 2 files, the second 6, one landing batch each


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, str]]:
    """A cluster of its own: free ports, state under artifacts/; stopped even if a test fails."""
    environment = {
        "CDC_CLUSTER_HOME": str(PROJECT_ROOT / "artifacts" / f"cluster-{os.getpid()}"),
        "CDC_SPARK_MASTER": f"spark://127.0.0.1:{_free_port()}",
        "CDC_MASTER_WEBUI_PORT": str(_free_port()),
        "CDC_WORKER_WEBUI_PORT": "0",  # any free ports: the master's status names them
        "CDC_CLUSTER_THRIFT_PORT": str(_free_port()),
        "CDC_CLUSTER_UI_PORT": str(_free_port()),
        "CDC_METASTORE_URL": f"jdbc:postgresql://127.0.0.1:{_free_port()}/metastore",
        "CDC_EXECUTOR_MEMORY": "1g",
        "CDC_WORKER_MEMORY": "3g",
        "CDC_SHUFFLE_PARTITIONS": "4",
        # every JVM of this cluster lives minutes (master and workers: Spark's own variable)
        "CDC_CLUSTER_JAVA_OPTIONS": TEST_JVM_OPTIONS,
        "SPARK_DAEMON_JAVA_OPTS": TEST_JVM_OPTIONS,
    }
    previous = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    home = Path(environment["CDC_CLUSTER_HOME"])
    started: dict[str, int] = {}
    try:
        completed = subprocess.run([sys.executable, str(SCRIPT), "start"], cwd=PROJECT_ROOT, check=False)
        assert completed.returncode == 0, f"the cluster did not start; see {home}"
        started = json.loads((home / "pids.json").read_text())
        yield environment
    finally:
        subprocess.run([sys.executable, str(SCRIPT), "stop"], cwd=PROJECT_ROOT, check=False)
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    # stop ended everything start started: every process group, PostgreSQL
    for name, pid in started.items():
        if name != "postgres":
            with pytest.raises(ProcessLookupError):
                os.killpg(pid, 0)
    assert not (home / "postgres" / "postmaster.pid").exists(), "PostgreSQL still runs"


class ClusterLoader:
    """The loader as an application on the cluster, in a process of its own (cdc_testkit.cluster_loader)."""

    TIMEOUT = 300  # seconds a load may take here: a hung load fails the test, not the suite

    def __init__(self, log_path: Path) -> None:
        self.log = log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cdc_testkit.cluster_loader"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            cwd=PROJECT_ROOT,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, name="cluster-loader-output", daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)  # the process ended

    def submit(self, schema: str, source_format: str, paths: list[Path], max_batch_messages: int = 5_000_000) -> None:
        request = {"schema": schema, "format": source_format, "paths": [str(path) for path in paths]}
        self.process.stdin.write(json.dumps({**request, "max_batch_messages": max_batch_messages}) + "\n")
        self.process.stdin.flush()

    def result(self) -> dict:
        deadline = time.monotonic() + self.TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"no answer from the cluster loader in {self.TIMEOUT} s; see {self.log.name}"
                ) from None
            if line is None:
                raise AssertionError(f"the cluster loader exited {self.process.wait()}; see {self.log.name}")
            if line.startswith("RESULT "):
                result = json.loads(line.removeprefix("RESULT "))
                assert "error" not in result, f"load on the cluster failed: {result['error']} (log {self.log.name})"
                return result

    def land(self, schema: str, source_format: str, paths: list[Path], max_batch_messages: int = 5_000_000) -> dict:
        self.submit(schema, source_format, paths, max_batch_messages)
        return self.result()

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def _tasks_per_worker(ui: str, app_id: str, master_webui: str) -> dict[str, int]:
    """Tasks the application ran per worker: its executors' task counts (driver's REST API),
    placed by the workers' own lists of the executors they run."""
    executors = _get_json(f"{ui}/api/v1/applications/{app_id}/executors")
    tasks = {executor["id"]: executor["totalTasks"] for executor in executors if executor["id"] != "driver"}
    per_worker: dict[str, int] = {}
    for worker in _get_json(f"{master_webui}/json/")["workers"]:
        mine = _get_json(f"{worker['webuiaddress']}/json/")["executors"]
        per_worker[worker["id"]] = sum(
            tasks.get(str(executor["id"]), 0) for executor in mine if executor["appid"] == app_id
        )
    return per_worker


@pytest.fixture(scope="module")
def runs(cluster: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Lands and builds the same messages on the embedded default and on the cluster; what the
    tests check, gathered on the way."""
    work = tmp_path_factory.mktemp("cluster")
    schema = f"t_{uuid.uuid4().hex[:10]}"
    reference, clustered = Project(schema), Project(schema, "cluster")
    changes = Scenario(seed=31, tables=3, keys=150, events=2500).generate()
    stream = write_stream(changes, STREAM_FORMAT, work / "stream", files=STREAM_FILES, seed=31, duplicate_share=0.05)
    samples = [
        (name, PROJECT_ROOT / "sample_data" / name)
        for name in project_formats()
        if (PROJECT_ROOT / "sample_data" / name).is_dir()
    ]
    facts: dict = {"sample_formats": len(samples)}

    reference_errors: list[BaseException] = []

    def land_reference() -> None:
        # the target named (not CDC_TARGET, which the cluster's builds set meanwhile); same schema
        try:
            for name, folder in samples:
                land(name, [str(folder)], "local")
            land(STREAM_FORMAT, [str(path) for path in stream], "local")
        except BaseException as exc:
            reference_errors.append(exc)

    # the embedded default lands while the cluster builds (whose statements mostly wait on the
    # Thrift server); dbt itself runs one invocation at a time
    reference_landing = threading.Thread(target=land_reference, name="reference-landing")
    loader = ClusterLoader(work / "cluster-loader.log")
    try:
        # first load: every format's samples and the stream's first files
        for name, folder in samples:
            loaded = loader.land(schema, name, [folder])
            assert loaded["stats"]["messages"] > 0, name
        first = loader.land(schema, STREAM_FORMAT, stream[:2])
        facts["loader"] = first
        # second load, a batch per file, and a build while it lands
        partitions = len(clustered.query("show partitions {schema}.raw_cdc_messages"))
        loader.submit(schema, STREAM_FORMAT, stream[2:], max_batch_messages=1)
        deadline = time.monotonic() + 120
        while len(clustered.query("show partitions {schema}.raw_cdc_messages")) == partitions:
            assert time.monotonic() < deadline, "the second load committed no batch within 120 s"
            time.sleep(0.2)
        facts["build_started"] = time.time()
        reference_landing.start()
        clustered.build(tests=False)
        facts["build_finished"] = time.time()
        facts["second_load"] = loader.result()
        facts["ledger"] = clustered.query(
            "select load_batch_id, source_format, messages_landed, row_change_messages + ddl_messages "
            "+ heartbeat_messages + transaction_messages + quarantined_messages from {schema}.cdc_load_batches"
        )
        facts["parsed"] = dict(
            clustered.query("select load_batch_id, count(distinct message_id) from {schema}.int_cdc_records group by 1")
        )
        facts["landed"] = dict(
            clustered.query("select load_batch_id, count(*) from {schema}.raw_cdc_messages group by 1")
        )
        # the rest, with the data tests of a scheduled run (over the rows it wrote: partition filters)
        clustered.untested_builds = False
        clustered.build(tests=True, typed_tables=True)
        facts["cluster_history"], facts["cluster_current"] = clustered.history(), clustered.current()

        master_webui = f"http://127.0.0.1:{cluster['CDC_MASTER_WEBUI_PORT']}"
        server_ui = f"http://127.0.0.1:{cluster['CDC_CLUSTER_UI_PORT']}"
        server_app = _get_json(f"{server_ui}/api/v1/applications")[0]["id"]
        facts["tasks"] = {
            "thrift server": _tasks_per_worker(server_ui, server_app, master_webui),
            "loader": _tasks_per_worker(first["ui"], first["app_id"], master_webui),
        }
    finally:
        loader.close()
        if reference_landing.ident is not None:
            reference_landing.join()
    if reference_errors:
        raise reference_errors[0]

    reference.build(tests=False)
    facts["reference_history"], facts["reference_current"] = reference.history(), reference.current()
    return facts


def test_cluster_builds_what_the_embedded_default_builds(runs: dict) -> None:
    assert runs["sample_formats"] == len(project_formats())
    assert len(runs["reference_history"]) > 1000  # the stream's versions, not only the samples'
    assert runs["cluster_history"] == runs["reference_history"]
    assert runs["cluster_current"] == runs["reference_current"]


def test_work_ran_on_both_workers(runs: dict) -> None:
    """The Thrift server's SQL and the loader's Spark job each ran tasks on both workers' executors."""
    for application, per_worker in runs["tasks"].items():
        assert len(per_worker) == 2, f"{application}: {per_worker}"
        assert all(tasks > 0 for tasks in per_worker.values()), f"{application} ran tasks on: {per_worker}"


def test_build_during_a_load_sees_whole_batches(runs: dict) -> None:
    """A build that ran while batches were landing parsed each batch it took whole: the ledger's
    accounted messages and the parsed records of a batch are all the messages it finally holds."""
    load = runs["second_load"]
    assert load["started"] < runs["build_started"] < load["finished"], "the build did not overlap the load"
    assert load["stats"]["batches"] == STREAM_FILES - 2
    assert runs["ledger"], "the build took no batch"
    for batch, source_format, messages_landed, accounted in runs["ledger"]:
        assert messages_landed == accounted == runs["landed"][batch], (batch, source_format)
    for batch, parsed in runs["parsed"].items():
        assert parsed == runs["landed"][batch], batch


def test_unreachable_master_and_server_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """One line naming the service and its address, before anything waits on it."""
    closed = _free_port()
    with pytest.raises(SystemExit, match=rf"the Spark master at 127\.0\.0\.1:{closed} is unreachable"):
        cluster_spark({"spark.master": f"spark://127.0.0.1:{closed}"})
    monkeypatch.setenv("CDC_CLUSTER_THRIFT_PORT", str(closed))
    monkeypatch.setenv("CDC_METASTORE_PASSWORD", "unused")
    with pytest.raises(SystemExit, match=rf"Thrift Server of target cluster at 127\.0\.0\.1:{closed} is unreachable"):
        connect("cluster")
