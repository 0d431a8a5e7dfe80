"""The DataWorks document samples (sample_data/dataworks_json) and the history they must give;
checked on the local target (test_dataworks_json) and on a Thrift server (test_thrift_target)."""

from __future__ import annotations

import json

from cdc_testkit import PROJECT_ROOT

SAMPLES = PROJECT_ROOT / "sample_data" / "dataworks_json"


def sample_messages() -> list[str]:
    """Every message of the document samples, as text."""
    texts = [line.strip() for path in sorted(SAMPLES.glob("*.jsonl")) for line in path.open() if line.strip()]
    texts += [
        json.dumps(message) for message in json.loads((SAMPLES / "doc001_oracle_rowid_repaired.json").read_text())
    ]
    return texts


EXPECTED_SAMPLE_HISTORY = [
    # table, key, version, is_current, is_deleted, op, row
    (
        "myDatabase.mySchema.tableName",
        '{"rowid":"AAIUMPAAFAACxExAAE"}',
        1,
        False,
        False,
        "insert",
        '{"binData":"VGVzdCB0ZXh0MTIz","id":111,"name":"scooter",'
        '"rowid":"AAIUMPAAFAACxExAAE","ts":"2020-05-24 10:14:29+00:00"}',
    ),
    (
        "myDatabase.mySchema.tableName",
        '{"rowid":"AAIUMPAAFAACxExAAE"}',
        2,
        True,
        False,
        "update",
        '{"binData":"VGVzdCB0ZXh0MTIz","id":222,"name":"donald",'
        '"rowid":"AAIUMPAAFAACxExAAE","ts":"2020-05-24 10:14:30+00:00"}',
    ),
    (
        "pkset_test.pkset_test_no_pk",
        '{"#alibaba_rds_row_id#":15}',
        1,
        False,
        False,
        "insert",
        '{"#alibaba_rds_row_id#":15,"job":"job11","name":"name11","sex":"man"}',
    ),
    (
        "pkset_test.pkset_test_no_pk",
        '{"#alibaba_rds_row_id#":15}',
        2,
        False,
        False,
        "update",
        '{"#alibaba_rds_row_id#":15,"job":"job11","name":"name11","sex":"woman"}',
    ),
    (
        "pkset_test.pkset_test_no_pk",
        '{"#alibaba_rds_row_id#":15}',
        3,
        True,
        True,
        "delete",
        '{"#alibaba_rds_row_id#":15,"job":"job11","name":"name11","sex":"woman"}',
    ),
    (
        "yunshi_db.t_shiyu_pk",
        '{"id":1,"name":"joe"}',
        1,
        False,
        False,
        "insert",
        '{"comment":"comment","id":1,"name":"joe"}',
    ),
    (
        "yunshi_db.t_shiyu_pk",
        '{"id":1,"name":"joe"}',
        2,
        False,
        False,
        "update",
        '{"comment":"com1","id":1,"name":"joe"}',
    ),
    (
        "yunshi_db.t_shiyu_pk",
        '{"id":1,"name":"joe"}',
        3,
        True,
        True,
        "delete",
        '{"comment":"com1","id":1,"name":"joe"}',
    ),
]


def history_summary(project) -> list[tuple]:
    return [(t, k, v, cur, dele, op, row) for t, k, v, _f, _to, cur, dele, op, row, _s, _e in project.history()]
