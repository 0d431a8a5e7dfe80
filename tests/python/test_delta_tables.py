"""What Delta Lake gives the project's tables: a build undone with RESTORE, files compacted by
OPTIMIZE without a row changing (run-operations cdc_restore and cdc_maintain)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import write_stream


def state(project) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """History, current rows and the watermark table, comparable."""
    batches = project.query("select * from {schema}.cdc_load_batches order by load_batch_id, source_format")
    return project.history(), project.current(), batches


def test_restore_undoes_a_build_and_maintain_changes_no_row(project, tmp_path: Path) -> None:
    changes = Scenario(seed=5, tables=2, keys=12, events=160).generate()
    first, second = write_stream(changes, "dataworks_json", tmp_path / "stream", files=2, seed=5, shuffle=True)
    project.land("dataworks_json", first)
    project.build(tests=False)
    before = state(project)
    (as_of,) = project.query("select date_format(current_timestamp(), 'yyyy-MM-dd HH:mm:ss.SSSSSS')")[0]
    time.sleep(1)  # the next commits are later than as_of, to the millisecond Delta records

    project.land("dataworks_json", second)
    project.build(tests=False)
    after = state(project)
    assert after[0] != before[0] and len(after[2]) == len(before[2]) + 1

    # the build undone: every model's table as it was, the watermark too
    project.dbt("run-operation", "cdc_restore", "--args", json.dumps({"as_of": as_of}))
    assert state(project) == before
    # so the next build processes the second load again, and gets the same rows
    project.build()
    assert state(project) == after

    # compaction changes files, not rows
    def history_files() -> int:
        detail = project.query("describe detail {schema}.cdc_history")
        return detail[0][9]  # numFiles

    files = history_files()
    project.dbt("run-operation", "cdc_maintain")
    assert history_files() < files
    assert state(project) == after


def test_restore_names_a_bad_timestamp(project) -> None:
    result = project.dbt("run-operation", "cdc_restore", "--args", "{as_of: yesterday}", check=False)
    assert not result.success
    assert "cdc_restore: argument `as_of` must be a UTC timestamp" in str(result.exception or result.result)
    assert "got 'yesterday'" in str(result.exception or result.result)
