"""The loader hashes its files while it opens the landing table (no Spark: the hashing job is
stood in for): the caller gets the job's digests, and a caller that fails first cancels the job
and sees its own error."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from cdc_dbt_spark import loader
from cdc_dbt_spark.tasks import FileDigest


class StubContext:
    """The SparkContext calls `_hashing` makes: cancelling a job group ends the stand-in job."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []
        self.job_ended = threading.Event()
        self._cancel = threading.Event()

    def cancelJobGroup(self, group: str) -> None:  # noqa: N802 (Spark's name)
        self.cancelled.append(group)
        self._cancel.set()

    def run_until_cancelled(self, spark, paths, progress) -> list[FileDigest]:
        self.group = progress.group
        try:
            if not self._cancel.wait(timeout=30):
                raise AssertionError("the hashing job was never cancelled")
            raise RuntimeError("job cancelled")
        finally:
            self.job_ended.set()


def test_the_caller_gets_the_jobs_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    digests = [FileDigest("ab" * 32, 10, 1), FileDigest(None, 0, 0, "no such file")]
    started = threading.Event()

    def hash_files(spark, paths, progress):
        assert paths == ["a.jsonl", "b.jsonl"]
        started.set()
        return digests

    monkeypatch.setattr(loader, "_digest", hash_files)
    spark = SimpleNamespace(sparkContext=StubContext())
    with loader._hashing(spark, ["a.jsonl", "b.jsonl"]) as digests_of_files:
        assert started.wait(timeout=30), "the job starts before the caller asks for the digests"
        assert digests_of_files() == digests
    assert spark.sparkContext.cancelled == []


def test_a_caller_that_fails_cancels_the_job_and_sees_its_own_error(monkeypatch: pytest.MonkeyPatch) -> None:
    context = StubContext()
    monkeypatch.setattr(loader, "_digest", context.run_until_cancelled)
    with (
        pytest.raises(SystemExit, match="cannot find the location"),
        loader._hashing(SimpleNamespace(sparkContext=context), ["a.jsonl"]),
    ):
        raise SystemExit("cannot find the location of cdc.raw_cdc_messages")
    assert context.job_ended.is_set(), "the job has ended when the error reaches the caller"
    assert context.cancelled == [context.group]


def test_no_files_no_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "_digest", lambda *args: pytest.fail("no job for no files"))
    with loader._hashing(SimpleNamespace(sparkContext=StubContext()), []) as digests_of_files:
        assert digests_of_files() == []
