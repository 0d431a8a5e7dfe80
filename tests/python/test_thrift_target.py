"""The same project against a Spark Thrift Server (target `thrift`), started from the PySpark wheel."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc_testkit.dataworks_samples import EXPECTED_SAMPLE_HISTORY, SAMPLES, history_summary
from cdc_testkit.faults import land_together
from cdc_testkit.harness import PROJECT_ROOT, Project, write_jsonl

pytestmark = pytest.mark.thrift


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def thrift_server() -> Iterator[None]:
    """A Thrift server with its own warehouse and metastore (the in-process Spark holds the local one)."""
    port = str(_free_port())
    environment = dict(
        os.environ,
        CDC_SPARK_HOME=str(PROJECT_ROOT / "artifacts" / f"thrift-{os.getpid()}"),
        CDC_THRIFT_PORT=port,
    )
    script = str(PROJECT_ROOT / "scripts" / "thrift_server.py")
    subprocess.run([sys.executable, script, "start"], env=environment, check=True, cwd=PROJECT_ROOT)
    previous_port = os.environ.get("CDC_THRIFT_PORT")
    os.environ["CDC_THRIFT_PORT"] = port
    try:
        yield
    finally:
        subprocess.run([sys.executable, script, "stop"], env=environment, check=False, cwd=PROJECT_ROOT)
        if previous_port is None:
            os.environ.pop("CDC_THRIFT_PORT", None)
        else:
            os.environ["CDC_THRIFT_PORT"] = previous_port


def test_build_and_docs_on_thrift(thrift_server: None, new_project) -> None:
    project: Project = new_project("thrift")
    stats = project.land("dataworks_json", SAMPLES)
    assert stats["messages"] == 13
    project.build(tests=False)
    assert history_summary(project) == EXPECTED_SAMPLE_HISTORY
    # an incremental run with nothing new changes nothing; re-landing lands nothing
    assert project.land("dataworks_json", SAMPLES)["messages"] == 0
    project.build()
    assert history_summary(project) == EXPECTED_SAMPLE_HISTORY
    project.dbt("docs", "generate")
    catalog = json.loads((Path(os.environ["DBT_TARGET_PATH"]) / "catalog.json").read_text())
    assert "model.cdc.cdc_history" in catalog["nodes"]


def test_loaders_started_together_on_thrift(thrift_server: None, new_project, tmp_path: Path) -> None:
    """Two loaders writing the same table side by side: one waits for the other's landing lock,
    then finds every file landed; each message is landed once."""
    project: Project = new_project("thrift")
    files = [
        write_jsonl(
            tmp_path / f"part-{number}.jsonl",
            [{"payload": {"op": "MHEARTBEAT", "n": number * 100 + i}} for i in range(100)],
        )
        for number in range(3)
    ]
    project.query("create database if not exists {schema}")
    environment = dict(os.environ, CDC_SCHEMA=project.schema, CDC_TARGET="thrift")
    together = land_together(environment, ["--format", "dataworks_json", *map(str, files)])
    assert [code for code, _ in together] == [0, 0], together
    assert sum(": already landed" in log for _, log in together) == 1, together
    assert project.query("select count(*), count(distinct message_id) from {schema}.raw_cdc_messages") == [(300, 300)]
