"""The oracle: a scenario replayed in Python, what the SQL models must agree with."""

from __future__ import annotations

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
