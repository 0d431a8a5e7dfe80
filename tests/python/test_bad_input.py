"""Bad input never stops a run and is never silently dropped (contract invariant 5).

The corpus under tests/data/bad_input/ is landed and built; every message either lands in
cdc_quarantine with a readable reason or is processed correctly, and no text from a message
ever becomes SQL (a table called `t; drop table cdc_current; --` is just a name).
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import PROJECT_ROOT, write_jsonl

CORPUS = PROJECT_ROOT / "tests" / "data" / "bad_input"


def test_bad_input_corpus(project, tmp_path: Path) -> None:
    big_value = "x" * (10 * 1024 * 1024)
    big = {
        "schema": {
            "dataColumn": [{"name": "id", "type": "LONG"}, {"name": "blob", "type": "STRING"}],
            "primaryKey": ["id"],
            "source": {"dbName": "bad_db", "tableName": "big_table"},
        },
        "payload": {
            "op": "INSERT",
            "sequenceId": "1",
            "timestamp": {"eventTime": 1600000000000},
            "after": {"dataColumn": {"id": 1, "blob": big_value}},
        },
    }
    big_file = write_jsonl(tmp_path / "ten_megabytes.jsonl", [big])
    stats = project.land("dataworks_json", CORPUS / "dataworks_json", big_file)
    landed = project.query("select count(*) from {schema}.raw_cdc_messages")[0][0]
    assert stats["messages"] == landed == 26  # empty lines are not messages; everything else landed
    project.build()

    reasons = dict(
        project.query(
            "select raw.message_text, q.quarantine_reason from {schema}.cdc_quarantine q "
            "join {schema}.raw_cdc_messages raw on q.message_id = raw.message_id"
        )
    )
    by_marker = {
        "UPSERT": 'unknown operation {"op":"UPSERT"}',
        '"other": 1': 'key column absent from the row image: ["id"]',
        '"value": 5': "payload.sequenceId is not a whole number",
        "id=1,v=x": "payload.after is not a JSON object",
        '"dataColumn": "id=1"': "payload.after.dataColumn is not a JSON object",
        '"primaryKey": "id"': "schema.primaryKey is not a list of column names",
        "yesterday": "payload.timestamp.eventTime is not a number of milliseconds",
        "[1, 2, 3]": "message is not a JSON object",
        '"just a string"': "message is not a JSON object",
        "no key anywhere": "no key: the message declares none, seed cdc_table_keys has none, no row locator column",
        '"source": null': "no table in the message",
        '{"schema": {}, "payload": {"sequenceId": "5"}}': "no operation in the message",
    }
    truncated = [r for text, r in reasons.items() if text.endswith('{"name": "v", "type')]
    assert truncated == ["not valid JSON"]
    # one line holding a whole object and more (two objects glued together, a stray brace) is
    # not one message: nothing of it is taken as a change
    glued = sorted(r for text, r in reasons.items() if "glued_table" in text or "extra_brace_table" in text)
    assert glued == ["not valid JSON", "not valid JSON"]
    for marker, reason in by_marker.items():
        matching = [r for text, r in reasons.items() if marker in text]
        assert matching == [reason], (marker, matching)
    assert "invalid UTF-8" in "".join(r for t, r in reasons.items() if "caf" in t)

    current = dict(
        ((table, key), image)
        for table, key, image in project.query(
            "select table_id, key_json, to_json(row_image) from {schema}.cdc_current"
        )
    )
    assert json.loads(current[("bad_db.ok_table", '{"id":1}')])["v"] == "fine"
    assert not {table for table, _ in current} & {"bad_db.glued_table", "bad_db.extra_brace_table"}
    assert ("bad_db.ok_table", '{"id":3}') in current
    assert ("bad_db.bom_table", '{"id":1}') in current and ("bad_db.bom_table", '{"id":2}') in current
    assert json.loads(current[("bad_db.utf8_table", '{"id":2}')])["v"] == "café ok"
    odd = json.loads(current[("x' or '1'='1.t; drop table cdc_current; --", '{"id`x":1}')])
    assert odd == {"id`x": 1, "a.b": 2, "semi;colon": 3, 'quo"te': 4, "it's": 5, "ünïcødé": "ñ", "naïve col": None}
    assert ("データ.表格", '{"ключ":"к1"}') in current
    assert len(json.loads(current[("bad_db.big_table", '{"id":1}')])["blob"]) == len(big_value)

    # conservation: every landed message is accounted for
    ledger = project.query(
        "select sum(messages_landed), sum(row_change_messages + ddl_messages + heartbeat_messages "
        "+ transaction_messages + quarantined_messages) from {schema}.cdc_load_batches"
    )
    assert ledger == [(landed, landed)]
