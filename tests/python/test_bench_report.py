"""The benchmark's results file and chart (cdc_bench.report), without running the bench."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from cdc_bench.report import main, publish
from cdc_bench.spark_work import job_kind, statement_kind

REPORT = {
    "target": "local",
    "format": "dataworks_json",
    "events": 1000,
    "keys": 100,
    "steps": [
        {"name": "floor", "seconds": 2.0, "parts": {}},
        {"name": "hand_written", "seconds": 5.0, "parts": {}},
        {"name": "full", "seconds": 40.0, "parts": {"load_s": 10.0, "build_s": 30.0}},
        {"name": "anchor", "seconds": 0.0, "note": "not available", "parts": {}},
        {"name": "increments", "seconds": 63.0, "parts": {"seconds_each": [30.0, 21.0, 12.0]}},
    ],
    "ratios": {"full/floor": 20.0},
}


def test_results_keep_machine_versions_commit_and_older_results(tmp_path: Path) -> None:
    first, _ = publish(REPORT, folder=tmp_path)
    assert first == tmp_path / "local-dataworks_json-1000.json"
    results = json.loads(first.read_text())
    assert results["steps"] == REPORT["steps"]
    assert results["machine"]["cores"] >= 1
    assert results["versions"]["pyspark"].startswith("4.")
    assert len(results["commit"]["sha"]) == 40
    # a second result of the same name: the first stays, numbered
    publish({**REPORT, "ratios": {"full/floor": 19.0}}, folder=tmp_path)
    assert json.loads((tmp_path / "local-dataworks_json-1000.1.json").read_text())["ratios"] == {"full/floor": 20.0}
    assert json.loads(first.read_text())["ratios"] == {"full/floor": 19.0}


def test_the_chart_draws_each_step_and_each_warm_cycle(tmp_path: Path) -> None:
    _, chart = publish(REPORT, name="chart", folder=tmp_path)
    root = ET.fromstring(chart.read_text())  # well-formed SVG
    texts = [element.text or "" for element in root.iter("{http://www.w3.org/2000/svg}text")]
    assert {"floor", "hand_written", "full"} <= set(texts)
    assert "anchor" not in texts and "increments" not in texts  # nothing measured; drawn per cycle
    assert any(text.startswith("40.0 s, 20.0x floor, 8.0x hand-written (load 10.0)") for text in texts)
    assert any("median 21.0 s" in text for text in texts)
    # redrawn from the JSON alone, the same picture
    svg_before = chart.read_text()
    chart.unlink()
    assert main([str(tmp_path / "chart.json")]) == 0
    assert chart.read_text() == svg_before


def test_a_statement_is_named_by_its_leading_sql_words() -> None:
    comment = '/* {"app": "dbt", "node_id": "model.cdc.cdc_history"} */'
    assert statement_kind(f"{comment} show tblproperties bench.cdc_op_codes") == "show tblproperties"
    # dbt-spark's merge starts with a line comment
    assert statement_kind(f"{comment} -- back compat for old kwarg name\n  merge into t as s using u") == "merge into"
    assert statement_kind(f"{comment}\n  with x as (select 1) select * from x") == "select"
    assert statement_kind("create or replace table bench.t as select 1") == "create or replace table"
    assert statement_kind(f"{comment} insert overwrite table t partition (p) by name select 1") == "insert overwrite"
    assert statement_kind("  ") == "(empty)"


def test_a_spark_job_is_named_by_what_it_does_without_versions_and_counts() -> None:
    # descriptions as Spark 4.2 and Delta 4.4 gave them in a small build
    assert job_kind("Delta: Filtering files for query") == "Delta: Filtering files for query"
    # a table's state read again after a commit, alone or while Delta filters its files
    snapshot = "Delta: Compute snapshot for version: N"
    assert job_kind("Delta: Compute snapshot for version: 1") == snapshot
    assert job_kind("Delta: Delta: Filtering files for query: Compute snapshot for version: 3") == snapshot
    assert job_kind("MERGE operation - materialize source") == "Delta: MERGE operation - materialize source"
    rewrite = "Writing Deletion Vectors for modified data - MERGE operation - Rewriting Deletion Vectors to {} files"
    assert job_kind("Delta: " + rewrite.format(2)) == "Delta: " + rewrite.format("N")
    assert (
        job_kind("Delta: MERGE operation - materialize source: Filtering files for query")
        == "Delta: MERGE operation - materialize source: Filtering files for query"
    )
    # the rest by the call that ran them
    assert job_kind("collect at /work/.venv/lib/python3.11/site-packages/dbt/adapters/spark/session.py:142") == (
        "collect (session.py)"
    )
    assert job_kind("$anonfun$withThreadLocalCaptured$1 at CompletableFuture.java:1768") == (
        "withThreadLocalCaptured (CompletableFuture.java)"
    )
    assert job_kind("$anonfun$recordDeltaOperationInternal$1 at DatabricksLogging.scala:128") == (
        "recordDeltaOperationInternal (DatabricksLogging.scala)"
    )
    assert job_kind("sql at <unknown>:0") == "sql (<unknown>)"
