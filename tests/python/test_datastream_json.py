"""Google Datastream JSON events, end to end: land -> dbt build -> read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_testkit.datastream_scenario import THIRDPARTY, expected_current, expected_history, two_loads
from cdc_testkit.harness import write_jsonl
from cdc_testkit.shared_rounds import Rounds, ScenarioView

GOOGLE_JSON = THIRDPARTY / "FormatDatastreamJsonToJsonTest.inputs.jsonl"
DATABASE = "ds_json_shop"  # the Avro test's stream is built beside this one
TABLE = f"{DATABASE}.customers"


def backfill_then_cdc(folder: Path) -> Rounds:
    first, second = two_loads(database=DATABASE)
    return [
        [("datastream_json", write_jsonl(folder / "load1.jsonl", first), GOOGLE_JSON)],
        [("datastream_json", write_jsonl(folder / "load2.jsonl", second))],
    ]


@pytest.mark.shared_rounds(scenario=backfill_then_cdc)
def test_backfill_then_cdc_shuffled_with_duplicates(shared: ScenarioView) -> None:
    """Backfill + CDC (updates, delete, re-insert, key change), re-sent events, shuffled, two
    loads each followed by a build: the exact history; Google's JSON test events beside it."""
    # after the first load only CDC has arrived
    assert [key for _t, key, _r in shared.current(after_round=0) if _t == TABLE] == [
        '{"id":1}',
        '{"id":2}',
        '{"id":30}',
        '{"id":4}',
        '{"id":5}',
    ]
    assert [r for r in shared.history() if r[0] == TABLE] == expected_history(TABLE)
    assert [r for r in shared.current() if r[0] == TABLE] == expected_current(TABLE)

    # Google's FormatDatastreamJsonToJsonTest inputs: keys from primary_keys (JOB_ID,
    # EMPLOYEE_ID); the hand-written events whose key names are not in the payload
    # (replication_index "order_id" vs ORDER_ID, "id" vs ID) or that have no key are quarantined.
    assert [r for r in shared.current() if r[0] != TABLE] == [
        (
            "XE.HR.JOBS",
            '{"JOB_ID":"PR_REP"}',
            '{"JOB_ID":"PR_REP","JOB_TITLE":"Public Relations Representative","MAX_SALARY":10500,"MIN_SALARY":4500}',
        ),
        ("mydb.dbo.EMPLOYEES", '{"EMPLOYEE_ID":101}', '{"EMPLOYEE_ID":101,"FIRST_NAME":"John","LAST_NAME":"Doe"}'),
    ]
    assert sorted(shared.query("select table_id, quarantine_reason from {schema}.cdc_quarantine")) == [
        ("XE.HR.EMPLOYEES", "no key: the message declares none, seed cdc_table_keys has none, no row locator column"),
        ("mydb.dbo.ITEMS", 'key column absent from the row image: ["id"]'),
        ("mydb.dbo.ORDERS", 'key column absent from the row image: ["order_id"]'),
    ]
    # the backfill row is a snapshot ordered before the CDC changes newer than its read
    assert shared.query("select op, count(*) from {schema}.cdc_events where table_id = 'XE.HR.JOBS' group by op") == [
        ("snapshot", 1)
    ]
