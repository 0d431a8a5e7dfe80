"""The oracle: a scenario replayed in Python, what the SQL models must agree with."""

from __future__ import annotations

import json

from cdc_testkit.scenario import Change


def expected_state(changes: list[Change]) -> tuple[dict, dict]:
    """Replay changes in sequence order: (current rows, version count per key).

    Keys are (table_id, key tuple); a version is opened by every insert or update and by a
    delete or truncate that ends a live row, as cdc_history counts them.
    """
    current: dict[tuple, dict] = {}
    versions: dict[tuple, int] = {}
    deleted: set[tuple] = set()
    for change in sorted(changes, key=lambda c: c.sequence):
        if change.kind == "truncate":
            for key in [k for k in current if k[0] == change.table_id]:
                del current[key]
                versions[key] += 1
                deleted.add(key)
            continue
        if change.kind not in ("insert", "update", "delete"):
            continue
        old_key = new_key = None
        if change.before is not None:
            old_key = (change.table_id, tuple(change.before[c] for c in change.key_columns))
        if change.after is not None:
            new_key = (change.table_id, tuple(change.after[c] for c in change.key_columns))
        leaves_old_key = change.kind == "delete" or (new_key is not None and old_key != new_key)
        if leaves_old_key and old_key in current:
            del current[old_key]
            versions[old_key] = versions.get(old_key, 0) + 1
            deleted.add(old_key)
        if change.after is not None:
            current[new_key] = change.after
            versions[new_key] = versions.get(new_key, 0) + 1
            deleted.discard(new_key)
    return current, versions


def assert_as_replayed(current_rows: list, version_rows: list, changes: list) -> None:
    """cdc_current and the version count per key are those of the scenario replayed in Python."""

    def scenario_key(table_id: str, key_json: str) -> tuple:
        # Debezium's PostgreSQL connector names db.schema.table: the scenario's database.table is its end
        return ".".join(table_id.split(".")[-2:]), tuple(json.loads(key_json).values())

    current, versions = expected_state(changes)
    got = {scenario_key(table_id, key): json.loads(image) for table_id, key, image in current_rows}
    assert set(got) == set(current)
    assert all(got[key]["name"] == current[key]["name"] for key in current)
    assert {scenario_key(table_id, key): count for table_id, key, count in version_rows} == versions
