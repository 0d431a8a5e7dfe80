"""DTS "Shareplex Json", end to end: land -> dbt build -> read back."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from cdc_testkit.harness import write_jsonl
from cdc_testkit.shared_rounds import Rounds, ScenarioView

T0 = datetime(2024, 1, 1)
TABLE = "SHOP.ORDERS"
# the key_json of ID 1 to 4
K1, K2, K3, K4 = '{"ID":"1"}', '{"ID":"2"}', '{"ID":"3"}', '{"ID":"4"}'


def at(scn: int) -> datetime:
    return T0 + timedelta(seconds=scn)


def message(op: str, scn: int, trans: str, seq: int, data=None, key=None, rowid=None, table: str = TABLE) -> dict:
    meta = {
        "time": at(scn).strftime("%Y-%m-%dT%H:%M:%S"),
        "userid": 84,
        "op": op,
        "scn": str(scn),
        "trans": trans,
        "seq": seq,
        "size": 2,
        "table": table,
        "idx": f"{seq}/2",
    }
    if rowid:
        meta["rowid"] = rowid
    out: dict = {"meta": meta}
    if data is not None:
        out["data"] = data
    if key is not None:
        out["key"] = key
    return out


def position(scn: int, trans: str, seq: int = 1) -> str:
    parts = ".".join(part.zfill(20) for part in trans.split("."))
    return f"{str(scn).zfill(38)}/{parts}/{str(seq).zfill(20)}"


def shuffled_with_duplicates(folder: Path) -> Rounds:
    messages = [
        message("ins", 100, "9.0.1", 1, {"ID": "1", "NAME": "a", "QTY": "5"}, rowid="R1"),
        message("ins", 100, "9.0.1", 2, {"ID": "2", "NAME": "x", "QTY": "1"}, rowid="R2"),
        # same scn: trans 9.5.7 comes before 10.0.1 (as numbers; as text it would not)
        message("upd", 200, "10.0.1", 1, {"NAME": "c"}, {"ID": "1", "NAME": "b"}, rowid="R1"),
        message("upd", 200, "9.5.7", 1, {"NAME": "b"}, {"ID": "1", "NAME": "a"}, rowid="R1"),
        # only QTY changed, to null: NAME is kept (missing is not null)
        message("upd", 300, "3.1.1", 1, {"QTY": None}, {"ID": "1", "QTY": "5"}, rowid="R1"),
        message("del", 400, "3.1.2", 1, {"ID": "2", "NAME": "x", "QTY": "1"}, rowid="R2"),
        message("ins", 500, "3.1.3", 1, {"ID": "2", "NAME": "again", "QTY": "9"}, rowid="R9"),
        message("TRUNCATE", 600, "3.1.4", 1),
        message("ins", 700, "3.1.5", 1, {"ID": "3", "NAME": "after", "QTY": "1"}, rowid="R3"),
        message("MERGE", 800, "3.1.6", 1, {"ID": "4"}),
    ]
    random.Random(5).shuffle(messages)
    first, second = messages[:5], messages[5:] + messages[:2]  # the second load repeats two messages
    return [
        [("shareplex_json", write_jsonl(folder / "load1.jsonl", first))],
        [("shareplex_json", write_jsonl(folder / "load2.jsonl", second))],
    ]


@pytest.mark.shared_rounds(scenario=shuffled_with_duplicates)
def test_stream_shuffled_with_duplicates_in_two_loads(shared: ScenarioView) -> None:
    """Partial updates overlaid, scn/trans/seq order (trans part by part), delete, re-insert, truncate."""
    one_a = '{"ID":"1","NAME":"a","QTY":"5","rowid":"R1"}'
    one_b = '{"ID":"1","NAME":"b","QTY":"5","rowid":"R1"}'
    one_c = '{"ID":"1","NAME":"c","QTY":"5","rowid":"R1"}'
    one_null = '{"ID":"1","NAME":"c","QTY":null,"rowid":"R1"}'
    two_x = '{"ID":"2","NAME":"x","QTY":"1","rowid":"R2"}'
    two_again = '{"ID":"2","NAME":"again","QTY":"9","rowid":"R9"}'
    p100_1, p100_2 = position(100, "9.0.1", 1), position(100, "9.0.1", 2)
    p200a, p200b, p300 = position(200, "9.5.7"), position(200, "10.0.1"), position(300, "3.1.1")
    p400, p500, p600, p700 = (
        position(400, "3.1.2"),
        position(500, "3.1.3"),
        position(600, "3.1.4"),
        position(700, "3.1.5"),
    )
    assert shared.history() == [
        (TABLE, K1, 1, at(100), at(200), False, False, "insert", one_a, p100_1, p200a),
        (TABLE, K1, 2, at(200), at(200), False, False, "update", one_b, p200a, p200b),
        (TABLE, K1, 3, at(200), at(300), False, False, "update", one_c, p200b, p300),
        (TABLE, K1, 4, at(300), at(600), False, False, "update", one_null, p300, p600),
        (TABLE, K1, 5, at(600), None, True, True, "truncate", one_null, p600, None),
        (TABLE, K2, 1, at(100), at(400), False, False, "insert", two_x, p100_2, p400),
        (TABLE, K2, 2, at(400), at(500), False, True, "delete", two_x, p400, p500),
        (TABLE, K2, 3, at(500), at(600), False, False, "insert", two_again, p500, p600),
        (TABLE, K2, 4, at(600), None, True, True, "truncate", two_again, p600, None),
        (
            TABLE,
            K3,
            1,
            at(700),
            None,
            True,
            False,
            "insert",
            '{"ID":"3","NAME":"after","QTY":"1","rowid":"R3"}',
            p700,
            None,
        ),
    ]
    assert shared.current() == [(TABLE, K3, '{"ID":"3","NAME":"after","QTY":"1","rowid":"R3"}')]
    assert shared.query("select table_id, vendor_op, is_truncate from {schema}.cdc_ddl_events") == [
        (TABLE, "TRUNCATE", True)
    ]
    assert shared.query("select quarantine_reason from {schema}.cdc_quarantine") == [
        ('unknown operation {"op":"MERGE"}',)
    ]


REKEYED = "SHOP.REKEYED"  # beside the other scenario's SHOP.ORDERS (cdc_testkit.shared_rounds)


def late_link_of_a_key_chain(folder: Path) -> Rounds:
    rekey_1_2 = message("upd", 200, "3.2.1", 1, {"ID": "2"}, {"ID": "1"}, rowid="R1", table=REKEYED)
    first = [
        message("ins", 100, "3.1.1", 1, {"ID": "1", "NAME": "a", "QTY": "5"}, rowid="R1", table=REKEYED),
        message("upd", 300, "3.3.1", 1, {"ID": "3", "NAME": "b"}, {"ID": "2", "NAME": "a"}, rowid="R1", table=REKEYED),
        message("upd", 400, "3.4.1", 1, {"QTY": "7"}, {"ID": "3", "QTY": "5"}, rowid="R1", table=REKEYED),
    ]
    return [
        [("shareplex_json", write_jsonl(folder / "load1.jsonl", first))],
        [("shareplex_json", write_jsonl(folder / "load2.jsonl", [rekey_1_2]))],
    ]


def rekeyed_row(key: str, name: str, qty: str) -> str:
    return f'{{"ID":"{key}","NAME":"{name}","QTY":"{qty}","rowid":"R1"}}'


def late_link_history() -> list[tuple]:
    """cdc_history of late_link_of_a_key_chain, whichever runs its loads are built in."""
    p100, p200, p300, p400 = (
        position(100, "3.1.1"),
        position(200, "3.2.1"),
        position(300, "3.3.1"),
        position(400, "3.4.1"),
    )
    return [
        (REKEYED, K1, 1, at(100), at(200), False, False, "insert", rekeyed_row("1", "a", "5"), p100, p200),
        (REKEYED, K1, 2, at(200), None, True, True, "delete", rekeyed_row("1", "a", "5"), p200, None),
        (REKEYED, K2, 1, at(200), at(300), False, False, "insert", rekeyed_row("2", "a", "5"), p200, p300),
        (REKEYED, K2, 2, at(300), None, True, True, "delete", rekeyed_row("2", "a", "5"), p300, None),
        (REKEYED, K3, 1, at(300), at(400), False, False, "insert", rekeyed_row("3", "b", "5"), p300, p400),
        (REKEYED, K3, 2, at(400), None, True, False, "update", rekeyed_row("3", "b", "7"), p400, None),
    ]


@pytest.mark.shared_rounds(scenario=late_link_of_a_key_chain)
def test_key_changes_carry_the_row_over(shared: ScenarioView) -> None:
    """An update that changes the key carries only the key and the changed columns: the new key
    starts from the old key's row, along a chain of key changes, also when a link arrives late."""
    # key 2 had no row when it became key 3: key 3 starts from what the message carries
    assert shared.current(after_round=0) == [
        (REKEYED, K1, rekeyed_row("1", "a", "5")),
        (REKEYED, K3, rekeyed_row("3", "b", "7")),
    ]
    assert shared.history() == late_link_history()


# its own project (a var the shared builds do not set), outside the shared project's group: the
# group is built by one worker, and the suite waits for it
def test_a_chain_of_key_changes_is_followed_within_its_limit(project, tmp_path: Path) -> None:
    """The same key changes from scratch, every link in one run; a later link in a later run; a
    chain longer than var cdc_key_change_chain_limit fails the run."""
    # every link in one run: a chain of two links needs a limit of two
    for loads in late_link_of_a_key_chain(tmp_path):
        for source_format, *paths in loads:
            project.land(source_format, *paths)
    project.build("--vars", "{cdc_key_change_chain_limit: 2}", tests=False)
    history = late_link_history()
    assert project.history() == history
    # a next link in a later run (key 3 becomes 4): the incremental run follows the chain to the old
    # key's row, and counts the chain once (each link's query sent once, not by every query that asks)
    rekey_3_4 = message("upd", 500, "3.5.1", 1, {"ID": "4"}, {"ID": "3"}, rowid="R1", table=REKEYED)
    project.land("shareplex_json", write_jsonl(tmp_path / "load3.jsonl", [rekey_3_4]))
    sent: list[str] = []
    project.build(
        "--vars",
        "{cdc_key_change_chain_limit: 3}",
        tests=False,
        callbacks=[lambda event: sent.append(event.info.msg) if event.info.name == "SQLQuery" else None],
    )
    link_queries = [sql for sql in sent if "with key_change_ends as" in sql]
    assert link_queries and len(link_queries) == len(set(link_queries)), link_queries
    p400, p500 = position(400, "3.4.1"), position(500, "3.5.1")
    assert [version for version in project.history() if version[1] in (K3, K4)] == [
        *history[4:5],
        (REKEYED, K3, 2, at(400), at(500), False, False, "update", rekeyed_row("3", "b", "7"), p400, p500),
        (REKEYED, K3, 3, at(500), None, True, True, "delete", rekeyed_row("3", "b", "7"), p500, None),
        (REKEYED, K4, 1, at(500), None, True, False, "insert", rekeyed_row("4", "b", "7"), p500, None),
    ]
    # a longer chain than the limit fails the run and says what to raise, rather than lose the row
    failed = project.dbt(
        "run", "--select", "cdc_history", "--full-refresh", "--vars", "{cdc_key_change_chain_limit: 1}", check=False
    )
    assert not failed.success
    assert "raise var cdc_key_change_chain_limit" in str(failed.result or failed.exception)
