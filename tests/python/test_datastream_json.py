"""Google Datastream JSON events, end to end: land -> dbt build -> read back."""

from __future__ import annotations

from pathlib import Path

from cdc_testkit.datastream_scenario import TABLE, THIRDPARTY, expected_current, expected_history, two_loads
from cdc_testkit.harness import write_jsonl

GOOGLE_JSON = THIRDPARTY / "FormatDatastreamJsonToJsonTest.inputs.jsonl"


def test_backfill_then_cdc_shuffled_with_duplicates(project, tmp_path: Path) -> None:
    """Backfill + CDC (updates, delete, re-insert, key change), re-sent events, shuffled, two
    loads each followed by a build: the exact history; Google's JSON test events beside it."""
    first, second = two_loads()
    project.land("datastream_json", write_jsonl(tmp_path / "load1.jsonl", first), GOOGLE_JSON)
    project.build(tests=False)
    # after the first load only CDC has arrived
    assert [key for _t, key, _r in project.current() if _t == TABLE] == [
        '{"id":1}',
        '{"id":2}',
        '{"id":30}',
        '{"id":4}',
        '{"id":5}',
    ]
    project.land("datastream_json", write_jsonl(tmp_path / "load2.jsonl", second))
    project.build()
    assert [r for r in project.history() if r[0] == TABLE] == expected_history()
    assert [r for r in project.current() if r[0] == TABLE] == expected_current()

    # Google's FormatDatastreamJsonToJsonTest inputs: keys from primary_keys (JOB_ID,
    # EMPLOYEE_ID); the hand-written events whose key names are not in the payload
    # (replication_index "order_id" vs ORDER_ID, "id" vs ID) or that have no key are quarantined.
    assert [r for r in project.current() if r[0] != TABLE] == [
        (
            "XE.HR.JOBS",
            '{"JOB_ID":"PR_REP"}',
            '{"JOB_ID":"PR_REP","JOB_TITLE":"Public Relations Representative","MAX_SALARY":10500,"MIN_SALARY":4500}',
        ),
        ("mydb.dbo.EMPLOYEES", '{"EMPLOYEE_ID":101}', '{"EMPLOYEE_ID":101,"FIRST_NAME":"John","LAST_NAME":"Doe"}'),
    ]
    assert sorted(project.query("select table_id, quarantine_reason from {schema}.cdc_quarantine")) == [
        ("XE.HR.EMPLOYEES", "no key: the message declares none, seed cdc_table_keys has none, no row locator column"),
        ("mydb.dbo.ITEMS", 'key column absent from the row image: ["id"]'),
        ("mydb.dbo.ORDERS", 'key column absent from the row image: ["order_id"]'),
    ]
    # the backfill row is a snapshot ordered before the CDC changes newer than its read
    assert project.query("select op, count(*) from {schema}.cdc_events where table_id = 'XE.HR.JOBS' group by op") == [
        ("snapshot", 1)
    ]
