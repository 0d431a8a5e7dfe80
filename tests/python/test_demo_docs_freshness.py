"""Every format's sample messages in one build, then what a user browses: docs site and freshness.

The docs site is served by `dbt docs serve` on a free loopback port and opened in headless
Chromium (Debian's `chromium`, installed by `make setup`); a screenshot of the lineage graph
is kept in artifacts/.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, Project

from cdc_dbt_spark.loader import project_formats

SAMPLES = PROJECT_ROOT / "sample_data"
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


@pytest.fixture(scope="module")
def samples_project() -> Project:
    import uuid

    project = Project(f"t_{uuid.uuid4().hex[:10]}")
    for source_format in project_formats():
        assert (SAMPLES / source_format).is_dir(), f"no sample messages for {source_format}"
        project.land(source_format, SAMPLES / source_format)
    project.build(unit_tests=True)  # what a user runs: everything, unit tests included
    return project


def test_every_format_lands_and_builds(samples_project: Project) -> None:
    ledger = dict(
        samples_project.query("select source_format, sum(messages_landed) from {schema}.cdc_load_batches group by 1")
    )
    assert set(ledger) == set(project_formats())
    formats_with_rows = {
        row[0] for row in samples_project.query("select distinct source_format from {schema}.cdc_history")
    }
    assert formats_with_rows == set(project_formats())


def test_source_freshness_per_stream(samples_project: Project) -> None:
    from dbt.cli.main import dbtRunner

    samples_project._env()
    result = dbtRunner().invoke(
        ["source", "freshness", "--profiles-dir", "profiles", "--project-dir", str(PROJECT_ROOT)]
    )
    checked = {r.node.name: r for r in result.result.results}
    assert set(checked) == set(project_formats())
    expected = dict(
        samples_project.query("select source_format, max(progress_ts) from {schema}.cdc_stream_progress group by 1")
    )
    for name, freshness in checked.items():
        # the samples are years old: every stream is reported as far behind, with its real time
        assert freshness.status == "error", name
        assert freshness.max_loaded_at.replace(tzinfo=None) == expected[name], name


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_docs_site_in_headless_chromium(samples_project: Project, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "Chromium is missing: `make setup` installs Debian's chromium package"
    samples_project.dbt("docs", "generate")
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
            "--project-dir",
            str(PROJECT_ROOT),
        ],
        cwd=PROJECT_ROOT,
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
