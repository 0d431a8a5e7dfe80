"""Bad input never stops a run and is never silently dropped (contract invariant 5).

The corpus under tests/data/bad_input/ is landed and built; every message either lands in
cdc_quarantine with a readable reason or is processed correctly, and no text from a message
ever becomes SQL (a table called `t; drop table cdc_current; --` is just a name).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
import yaml

from cdc_dbt_spark.loader import project_formats
from cdc_testkit.harness import PROJECT_ROOT, write_jsonl

CORPUS = PROJECT_ROOT / "tests" / "data" / "bad_input"


def corpus() -> dict[str, list[dict]]:
    """format -> its cases (tests/data/bad_input/<format>/cases.yml; README.md there).
    CDC_BAD_INPUT_FORMATS=a,b limits test_bad_input_corpus to those formats, while writing cases."""
    return {
        folder.name: yaml.safe_load((folder / "cases.yml").read_text(encoding="utf-8"))
        for folder in sorted(CORPUS.iterdir())
        if folder.is_dir()
    }


def test_corpus_covers_every_format() -> None:
    cases = corpus()
    assert set(cases) == set(project_formats())
    for source_format, format_cases in cases.items():
        files = {case["file"] for case in format_cases}
        on_disk = {path.name for path in (CORPUS / source_format).iterdir() if path.name != "cases.yml"}
        assert files == on_disk, f"{source_format}: cases.yml and the folder's files differ"
        for case in format_cases:
            assert case.get("why"), f"{source_format}/{case['file']}: say why the case exists"
            assert case.get("unreadable") or "messages" in case, f"{source_format}/{case['file']}"


def test_bad_input_corpus(project, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Every format's corpus in one build: each message is processed as its case says or
    quarantined with the reason it names; unreadable files are named; the ledger adds up."""
    only = os.environ.get("CDC_BAD_INPUT_FORMATS")
    cases = {name: found for name, found in corpus().items() if not only or name in only.split(",")}
    # a 10 MB message is one change like any other; one of 50 MB is larger than the 16 MiB Spark
    # parses JSON into (a VARIANT): it is quarantined, saying so
    big_files = []
    for megabytes in (10, 50):
        big = {
            "schema": {
                "dataColumn": [{"name": "id", "type": "LONG"}, {"name": "blob", "type": "STRING"}],
                "primaryKey": ["id"],
                "source": {"dbName": "bad_db", "tableName": f"big_table_{megabytes}"},
            },
            "payload": {
                "op": "INSERT",
                "sequenceId": "1",
                "timestamp": {"eventTime": 1600000000000},
                "after": {"dataColumn": {"id": 1, "blob": "x" * (megabytes * 1024 * 1024)}},
            },
        }
        big_files.append(write_jsonl(tmp_path / f"{megabytes}_megabytes.jsonl", [big]))
    caplog.set_level(logging.ERROR, logger="cdc_load")
    for source_format, format_cases in cases.items():
        paths = [CORPUS / source_format / case["file"] for case in format_cases]
        extra = big_files if source_format == "dataworks_json" else []
        stats = project.land(source_format, *paths, *extra)
        unreadable = [path for path, case in zip(paths, format_cases, strict=True) if case.get("unreadable")]
        assert stats["files_unreadable"] == len(unreadable), source_format
        for path in unreadable:
            assert str(path) in caplog.text, f"the loader does not name {path}"
    project.build()

    landed = dict(project.query("select source_file, count(*) from {schema}.raw_cdc_messages group by 1"))
    quarantined: dict[tuple[str, int], set[str]] = {}
    for source_file, index, reason in project.query(
        "select source_file, message_index, quarantine_reason from {schema}.cdc_quarantine"
    ):
        quarantined.setdefault((source_file, index), set()).add(reason)
    current: dict[str, dict[str, dict]] = {}
    for table, key, image in project.query("select table_id, key_json, to_json(row_image) from {schema}.cdc_current"):
        current.setdefault(table, {})[key] = json.loads(image)
    versions = {
        (table, key): count
        for table, key, count in project.query(
            "select table_id, key_json, count(*) from {schema}.cdc_history group by 1, 2"
        )
    }
    problems = []
    for source_format, format_cases in cases.items():
        for case in format_cases:
            path = str(CORPUS / source_format / case["file"])
            where = f"{source_format}/{case['file']}"
            expected_messages = 0 if case.get("unreadable") else case["messages"]
            if landed.get(path, 0) != expected_messages:
                problems.append(f"{where}: {landed.get(path, 0)} messages landed, expected {expected_messages}")
            got = {index: reasons for (file, index), reasons in quarantined.items() if file == path}
            want = {int(index): {reason} for index, reason in (case.get("quarantine") or {}).items()}
            if got != want:
                problems.append(f"{where}: quarantined {got}, expected {want}")
            for table, keys in (case.get("current") or {}).items():
                rows = current.get(table, {})
                if set(rows) != set(keys):
                    problems.append(f"{where}: {table} has current keys {sorted(rows)}, expected {sorted(keys)}")
                for key, columns in keys.items():
                    row = rows.get(key, {})
                    differing = {
                        name: row.get(name) for name, value in (columns or {}).items() if row.get(name) != value
                    }
                    if key in rows and differing:
                        problems.append(f"{where}: {table} {key} has {differing}, expected {columns}")
            for table, keys in (case.get("versions") or {}).items():
                for key, count in keys.items():
                    if versions.get((table, key), 0) != count:
                        problems.append(f"{where}: {table} {key} has {versions.get((table, key), 0)} versions")
    assert not problems, "\n".join(problems)

    if "dataworks_json" in cases:
        assert len(current["bad_db.big_table_10"]['{"id":1}']["blob"]) == 10 * 1024 * 1024
        fifty = os.path.getsize(big_files[1]) - 1  # without its newline
        assert "bad_db.big_table_50" not in current
        assert quarantined[(str(big_files[1]), 0)] == {
            f"not valid JSON, or larger than the 16 MiB Spark parses into a VARIANT ({fifty} bytes)"
        }
    # conservation: every landed message is accounted for
    total = sum(landed.values())
    ledger = project.query(
        "select sum(messages_landed), sum(row_change_messages + ddl_messages + heartbeat_messages "
        "+ transaction_messages + quarantined_messages) from {schema}.cdc_load_batches"
    )
    assert ledger == [(total, total)]
