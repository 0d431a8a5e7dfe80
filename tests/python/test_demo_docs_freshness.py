"""The demo from a fresh clone, then what a user browses: docs site and freshness.

The demo (`scripts/demo.py`, what `make demo` runs) lands every format's sample messages and
runs `dbt build` (unit tests included) in a copy of the project's tracked files in a temporary
folder with nothing beside it, on a warehouse of its own: it must need nothing outside the
project (no ../shared). The same process then runs `dbt source freshness`, `dbt docs generate`
and the queries these tests check (cdc_testkit.demo_then_inspect). The docs site is served
by `dbt docs serve` on a free loopback port and opened in headless Chromium (Debian's
`chromium`, installed by `make setup`); a screenshot of the lineage graph is kept in artifacts/.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from cdc_dbt_spark.loader import project_formats
from cdc_testkit.harness import PROJECT_ROOT

pytestmark = pytest.mark.e2e  # a fresh clone, and the docs site in a browser

ARTIFACTS = PROJECT_ROOT / "artifacts"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class DemoRun:
    clone: Path
    env: dict[str, str]
    output: str  # the demo's stdout and stderr
    result: dict


def clone_of_project(folder: Path) -> Path:
    """The project's tracked files as they are in this checkout (what a clone of it holds,
    uncommitted edits included), in `folder`/cdc-dbt-spark: nothing else beside it."""
    clone = folder / "cdc-dbt-spark"
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = PROJECT_ROOT / name
        if source.is_file():  # a tracked file deleted in this checkout is not copied
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    return clone


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    home = tmp_path_factory.mktemp("fresh")
    clone = clone_of_project(home)
    beside = [str(folder / "shared") for folder in clone.parents if (folder / "shared").exists()]
    assert not beside, f"the fresh clone must have nothing beside it, but these exist: {beside}"
    # the suite's venv, as `make setup` would have installed the clone (`pip install -e .`);
    # the suite's CDC_*/DBT_* settings are dropped: the clone runs on its defaults
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CDC_", "DBT_", "PYTHON"))}
    env |= {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(clone / "src"),
        "CDC_SPARK_HOME": str(home / "spark"),
        "CDC_SHUFFLE_PARTITIONS": os.environ.get("CDC_SHUFFLE_PARTITIONS", "4"),
    }
    out = home / "result.json"
    run = subprocess.run(
        [sys.executable, "-m", "cdc_testkit.demo_then_inspect", str(out)],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0 and out.exists(), f"the demo failed in a fresh clone:\n{output[-6000:]}"
    return DemoRun(clone, env, output, json.loads(out.read_text()))


def test_demo_runs_from_a_fresh_clone(demo_run: DemoRun) -> None:
    assert "Traceback" not in demo_run.output, demo_run.output[-6000:]
    assert "== cdc_current: live rows per format and table" in demo_run.output
    result = demo_run.result
    # every format's samples landed and built
    ledger = dict(result["ledger"])
    assert set(ledger) == set(project_formats()) and all(ledger.values())
    assert {row[0] for row in result["history_formats"]} == set(project_formats())
    # nothing was turned away for want of a file (e.g. an Avro schema outside the project)
    assert result["loader_errors"] == []
    assert [row for row in result["quarantine"] if row[0] == "dts_avro"] == []
    missing = [row for row in result["quarantine"] if "not found" in row[1] or "No such file" in row[1]]
    assert missing == []


def test_source_freshness_per_stream(demo_run: DemoRun) -> None:
    checked = {name: (status, loaded_at) for name, status, loaded_at in demo_run.result["freshness"]}
    assert set(checked) == set(project_formats())
    expected = dict(demo_run.result["progress"])
    for name, (status, loaded_at) in checked.items():
        # the samples are years old: every stream is reported as far behind, with its real time
        assert status == "error", name
        assert loaded_at == expected[name], name


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_docs_site_in_headless_chromium(demo_run: DemoRun, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "Chromium is missing: `make setup` installs Debian's chromium package"
    assert demo_run.result["docs_generated"], "dbt docs generate failed in the clone"
    port = _free_port()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "dbt"),
            "docs",
            "serve",
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            "--no-browser",
            "--profiles-dir",
            "profiles",
        ],
        cwd=demo_run.clone,
        env=demo_run.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        site = f"http://127.0.0.1:{port}"
        for _ in range(60):
            try:
                manifest = json.load(urllib.request.urlopen(f"{site}/manifest.json", timeout=2))
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("dbt docs serve did not answer")

        # the lineage runs from the landing table to the typed tables
        typed = [
            node
            for node in manifest["nodes"]
            if node.startswith("model.cdc.")
            and node.endswith("_current")
            and "/typed/" in manifest["nodes"][node]["original_file_path"]
        ]
        assert typed, "no typed table in the project"
        ancestors, frontier = set(), [typed[0]]
        while frontier:
            node = frontier.pop()
            for parent in manifest["parent_map"].get(node, []):
                if parent not in ancestors:
                    ancestors.add(parent)
                    frontier.append(parent)
        assert "source.cdc.cdc_landing.raw_cdc_messages" in ancestors
        assert "model.cdc.cdc_history" in ancestors

        browser = [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=20000",
            "--window-size=1600,1000",
        ]
        dom = subprocess.run(
            [*browser, "--dump-dom", f"{site}/#!/overview"], capture_output=True, text=True, timeout=120
        ).stdout
        for model in ("cdc_history", "cdc_current", "cdc_events", typed[0].split(".")[-1]):
            assert model in dom, f"{model} not listed on the docs site"
        # the site opens on the project's overview (models/_overview__docs.md), not dbt's welcome page
        assert "Where to start" in dom and "Welcome to the auto-generated documentation" not in dom
        ARTIFACTS.mkdir(exist_ok=True)
        screenshot = ARTIFACTS / "docs-lineage.png"
        screenshot.unlink(missing_ok=True)
        subprocess.run(
            [*browser, f"--screenshot={screenshot}", f"{site}/#!/model/{typed[0]}?g_v=1"],
            capture_output=True,
            timeout=120,
        )
        assert screenshot.exists() and screenshot.stat().st_size > 10_000
    finally:
        server.terminate()
        server.wait(timeout=30)
