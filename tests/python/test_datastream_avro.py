"""Google Datastream Avro files, end to end: land -> dbt build -> read back.

One project holds the generated stream (the same events as the JSON test, written as Avro)
and Google's real Datastream Avro files, each landed in the order Google's tests upload them,
in two loads; the current state after each build is what Google's tests assert.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdc_testkit.avro_files import write_datastream_avro
from cdc_testkit.datastream_scenario import THIRDPARTY, expected_current, expected_history, two_loads
from cdc_testkit.shared_rounds import Rounds, ScenarioView

DATASTREAM = THIRDPARTY
EVENTS_IT = DATASTREAM / "DataStreamToSpannerEventsIT"
SESSION_IT = DATASTREAM / "DataStreamToSpannerSessionIT"
SHADOW_IT = DATASTREAM / "SeparateShadowTableDatabaseIT"
DATABASE = "ds_avro_shop"  # the JSON test's stream is built beside this one
TABLE = f"{DATABASE}.customers"

FIRST_LOAD = [
    EVENTS_IT / "mysql-backfill-Users.avro",
    SESSION_IT / "mysql-backfill-Category.avro",
    SHADOW_IT / "my_table-simpleTest-3-inserts.avro",
    SHADOW_IT / "alltypes-test-3-inserts.avro",
    DATASTREAM / "avro_file_ut.avro",
    DATASTREAM / "bytearray.avro",
    DATASTREAM / "mysql_numbers_test.avro",
    DATASTREAM / "mysql_people_test.avro",
]
SECOND_LOAD = [
    EVENTS_IT / "mysql-cdc-Users.avro",
    EVENTS_IT / "mysql-backfill-Movie.avro",
    EVENTS_IT / "mysql-Articles.avro",
    EVENTS_IT / "mysql-Authors.avro",
    EVENTS_IT / "mysql-Books.avro",
    SESSION_IT / "mysql-cdc-Category.avro",
    SHADOW_IT / "my_table-simpleTest-update-delete.avro",
    SHADOW_IT / "my_table-simpleTest-pk-update.avro",
    SHADOW_IT / "alltypes-test-update-delete.avro",
    SHADOW_IT / "alltypes-test-pk-update.avro",
]


def rows(shared: ScenarioView, table_id: str, *columns: str, after_round: int = -1) -> list[tuple]:
    """Current rows of one table as tuples of the given columns, sorted."""
    found = []
    for _t, _key, image in shared.current(after_round):
        if _t == table_id:
            values = json.loads(image)
            found.append(tuple(values[column] for column in columns))
    return sorted(found)


def generated_stream_and_google_files(folder: Path) -> Rounds:
    first, second = two_loads(database=DATABASE)
    return [
        [("datastream_avro", write_datastream_avro(first, folder / "load1.avro"), *FIRST_LOAD)],
        [("datastream_avro", write_datastream_avro(second, folder / "load2.avro"), *SECOND_LOAD)],
    ]


@pytest.mark.shared_rounds(scenario=generated_stream_and_google_files)
def test_generated_stream_and_google_files(shared: ScenarioView) -> None:
    # after the backfills and first inserts (Google's first assertions)
    assert rows(shared, "l1.Users", "id", "name", after_round=0) == [(1, "Tester Kumar"), (2, "Tester Yadav")]
    assert rows(shared, "l1.Category", "category_id", "name", after_round=0) == [(1, "xyz"), (2, "abc")]
    assert rows(shared, "ea-main.my_table", "id", "val", after_round=0) == [(1, 10), (2, 10), (3, 10)]
    assert len(rows(shared, "ea-main.alltypes", "int64_field", after_round=0)) == 3

    # the generated stream: exactly the history of the JSON rendering
    assert [r for r in shared.history() if r[0] == TABLE] == expected_history(TABLE)
    assert [r for r in shared.current() if r[0] == TABLE] == expected_current(TABLE)

    # DataStreamToSpannerEventsIT.migrationTestWithUpdatesAndDeletes
    assert rows(shared, "l1.Users", "id", "name", "age", "subscribed", "plan", "startDate") == [
        (1, "Tester Kumar", 30, 0, "A", "2023-01-01T00:00:00+00:00"),
        (3, "Tester Gupta", 50, 0, "Z", "2023-06-07T00:00:00+00:00"),
        (4, "Tester", 38, 1, "D", "2023-09-10T00:00:00+00:00"),
    ]
    # DataStreamToSpannerSessionIT (the Spanner target's full_name is the source's name)
    assert rows(shared, "l1.Category", "category_id", "name") == [(2, "abc1"), (3, "def"), (4, "ghi")]
    # SeparateShadowTableDatabasePKFocusedIT.migrationTestSimpleTable: the key change 1 -> 10
    # (UPDATE-DELETE + UPDATE-INSERT at one log position) ends 1 and opens 10
    assert rows(shared, "ea-main.my_table", "id", "val") == [(2, 20), (10, 10)]
    assert [
        (key, version, deleted, op)
        for _t, key, version, _f, _to, _c, deleted, op, _i, _s, _e in shared.history()
        if _t == "ea-main.my_table"
    ] == [
        ('{"id":10}', 1, False, "update"),
        ('{"id":1}', 1, False, "insert"),
        ('{"id":1}', 2, True, "delete"),
        ('{"id":2}', 1, False, "insert"),
        ('{"id":2}', 2, False, "update"),
        ('{"id":3}', 1, False, "insert"),
        ('{"id":3}', 2, True, "delete"),
    ]
    # migrationTestAllDataType: composite key over typed columns
    assert rows(shared, "ea-main.alltypes", "int64_field", "val") == [(2, 20), (10, 10)]
    # DataStreamToSpannerEventsIT.interleavedAndFKAndIndexTest and migrationTestWithInsertsOnly
    assert rows(shared, "l1.Authors", "author_id", "name") == [(1, "a1"), (2, "a2"), (3, "a3"), (4, "a4")]
    assert rows(shared, "l1.Books", "id", "title", "author_id") == [
        (1, "Book005", 3),
        (2, "Book002", 3),
        (3, "Book004", 4),
        (4, "Book005", 2),
    ]
    assert [r[:2] for r in rows(shared, "l1.Articles", "id", "name")] == [
        (1, "Article001"),
        (2, "Article002"),
        (3, "Article004"),
        (4, "Article005"),
    ]
    assert [(i, n) for i, n in rows(shared, "l1.Movie", "id", "name")] == [(1, "movie1"), (2, "movie2")]
    # FormatDatastreamRecordToJsonTest: Oracle backfill without key, located by row_id; Oracle
    # {value, length} and {timestamp, offset} records unwrapped; MySQL numbers as Google expects
    locations = rows(shared, "XE.HR.LOCATIONS", "_metadata_row_id", "STREET_ADDRESS", "CITY", "timestamp_with_tz")
    # 23 records, but two different rows (LOCATION_ID 3100 and 3200) carry the same row_id
    # AAAEALAAEAAAACdAAW in Google's file: keyed by row_id they are one row. A row locator is
    # only as good as its uniqueness; declare such a table's key in seed cdc_table_keys.
    assert len(locations) == 22
    assert ("AAAEALAAEAAAACdAAB", "1297 Via Cola di Rie", "Roma", "2022-10-13T14:30:00.000056+00:00") in locations
    assert rows(shared, "user1.numbers", "id", "decimaler", "bigu", "intyu", "tiny") == [
        (1, "1.00", "1", 1, 1),
        (2, "11.22", "0", 4294967295, -1),
    ]
    assert rows(shared, "test.people", "id", "email") == [(1, "dylan@email.com")]
    # testPostgresByteArray: bytea arrives base64 ("3q2+7w=="); primary_keys [] gives no key
    assert shared.query(
        "select variant_get(after_image, '$.binary_content', 'string') from {schema}.int_cdc_records "
        "where table_id = 'public.source_table'"
    ) == [("3q2+7w==",)]
    assert shared.query("select table_id, quarantine_reason from {schema}.cdc_quarantine") == [
        (
            "public.source_table",
            "no key: the message declares none, seed cdc_table_keys has none, no row locator column",
        )
    ]
