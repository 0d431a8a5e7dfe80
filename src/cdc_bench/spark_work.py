"""What a dbt invocation asks of the Spark in this process, counted: the SQL statements dbt sends (through
dbt-spark's session cursor) and the Spark jobs they run (from Spark's status store, which Spark's own
listener of SQL executions fills: every job of a statement, Delta's bookkeeping included), in all and per dbt
node, and what each statement of a node is (its leading SQL words) with the jobs it ran: the statements to cut.
The fixed cost of a build is in these counts more than in its seconds, which drift with the machine.
Only for builds in this process (target local, method session): a Thrift server's work is not seen here."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SparkWork:
    statements: int = 0
    jobs: int = 0
    # node name -> (statements, jobs), for the nodes that ran any
    per_node: dict[str, tuple[int, int]] = field(default_factory=dict)
    # node name -> each statement it sent, in order: its kind (statement_kind) and the Spark jobs run
    # until the next statement; statements sent outside any node (dbt's own: its relation cache) under ""
    node_statements: dict[str, list[str]] = field(default_factory=dict)
    # job kind (job_kind) -> (jobs, their seconds from submitted to completed), most jobs first; counted
    # only when asked (counted's job_kinds)
    job_kinds: dict[str, tuple[int, float]] = field(default_factory=dict)

    def summary(self, top: int = 5) -> dict[str, Any]:
        heaviest = sorted(self.per_node.items(), key=lambda item: (-item[1][1], -item[1][0]))[:top]
        return {
            "statements": self.statements,
            "jobs": self.jobs,
            "heaviest_nodes": {name: {"statements": s, "jobs": j} for name, (s, j) in heaviest},
            "statements_by_node": self.node_statements,
        }


# dbt's query comment (/* {"app": "dbt", ...} */) and SQL line comments before a statement's first word
_LEADING_COMMENTS = re.compile(r"^(?:\s+|/\*.*?\*/|--[^\n]*\n)*", re.DOTALL)


def statement_kind(sql: str) -> str:
    """What a statement is, from its leading words: `merge into`, `insert overwrite`, `describe query`,
    `show tblproperties`, `create or replace table`...; a query (`with` too) is `select`."""
    words = _LEADING_COMMENTS.sub("", sql, count=1).lower().split(maxsplit=4)
    if not words:
        return "(empty)"
    if words[0] in ("select", "with", "(select", "("):
        return "select"
    if words[:2] == ["create", "or"]:
        return " ".join(words[:4])
    return " ".join(words[:2])


_CALL_SITE = re.compile(r"^(?P<call>\S+) at (?P<where>\S+?)(?::\d+)?$")
_DELTA_PREFIXES = re.compile(r"^(?:Delta: )+")


def job_kind(description: str) -> str:
    """What a Spark job is, from the description Spark shows for it, without what changes from one build to
    the next (table versions, file counts): Delta names its own jobs by what they do (`Delta: Filtering files
    for query`, one per Delta table a statement reads; `Delta: Compute snapshot for version: N`, a table's
    state read again after a commit, also when Delta computes it while filtering files; the phases of a
    MERGE); the rest are named by the call that ran them, `collect (session.py)` being a query dbt sent."""
    text = _DELTA_PREFIXES.sub("", description.strip())
    if "Compute snapshot for version" in text:
        return "Delta: Compute snapshot for version: N"
    if text == "Filtering files for query":
        return "Delta: Filtering files for query"
    call_site = _CALL_SITE.match(text)
    if call_site:
        # `$anonfun$withThreadLocalCaptured$1 at CompletableFuture.java:1768`: withThreadLocalCaptured
        call = re.sub(r"\$anonfun\$|\$\d+$", "", call_site["call"])
        return f"{call} ({call_site['where'].rsplit('/', 1)[-1]})"
    return "Delta: " + re.sub(r"\d+", "N", text)


def _jobs(spark: Any, after_id: int) -> list[tuple[int, str, float]]:
    """(job id, job_kind, seconds from submitted to completed) of the jobs after `after_id` Spark still holds."""
    found = []
    iterator = spark.sparkContext._jsc.sc().statusStore().jobsList(None).iterator()
    while iterator.hasNext():
        job = iterator.next()
        if job.jobId() > after_id:
            description = job.description().get() if job.description().isDefined() else job.name()
            submitted, completed = job.submissionTime(), job.completionTime()
            seconds = (
                (completed.get().getTime() - submitted.get().getTime()) / 1000
                if submitted.isDefined() and completed.isDefined()
                else 0.0
            )
            found.append((job.jobId(), job_kind(description), seconds))
    return found


def _executions(spark: Any, after_id: int) -> list[tuple[int, int, int]]:
    """(execution id, submission time in ms, jobs) of the SQL executions after `after_id` Spark still holds."""
    found = []
    iterator = spark._jsparkSession.sharedState().statusStore().executionsList().iterator()
    while iterator.hasNext():
        execution = iterator.next()
        if execution.executionId() > after_id:
            found.append((execution.executionId(), execution.submissionTime(), execution.jobs().size()))
    return found


@contextmanager
def counted(spark: Any, job_kinds: bool = False) -> Iterator[tuple[SparkWork, list]]:
    """Counts the statements and jobs of what runs inside the block; yields the counts (filled when the block
    ends) and a list to put dbt's node results in (dbtRunner's `result.result`), for the counts per node.
    With `job_kinds`, also the jobs by kind (SparkWork.job_kinds): a walk of Spark's job list at each end of
    the block, a few py4j calls per job, which the bench's timed builds leave out."""
    from dbt.adapters.spark import session

    work, node_results = SparkWork(), []
    first = max((execution[0] for execution in _executions(spark, -1)), default=-1)
    first_job = max((job[0] for job in _jobs(spark, -1)), default=-1) if job_kinds else None
    sent: list[tuple[float, str]] = []  # (when, kind)
    execute = session.Cursor.execute

    def counting_execute(cursor: Any, sql: str, *parameters: Any) -> Any:
        sent.append((time.time() * 1000, statement_kind(sql)))
        return execute(cursor, sql, *parameters)

    session.Cursor.execute = counting_execute
    try:
        yield work, node_results
    finally:
        session.Cursor.execute = execute
    executions = _executions(spark, first)
    work.statements, work.jobs = len(sent), sum(jobs for _, _, jobs in executions)
    if first_job is not None:
        kinds: dict[str, tuple[int, float]] = {}
        for _, kind, seconds in _jobs(spark, first_job):
            count, total = kinds.get(kind, (0, 0.0))
            kinds[kind] = (count + 1, total + seconds)
        work.job_kinds = dict(sorted(kinds.items(), key=lambda item: (-item[1][0], item[0])))
    # dbt sends one statement at a time (threads: 1): a statement's jobs are those submitted before the next
    ends = [at for at, _ in sent[1:]] + [float("inf")]
    labelled = [
        (at, f"{kind} ({sum(count for _, submitted, count in executions if at <= submitted < end)} jobs)")
        for (at, kind), end in zip(sent, ends, strict=True)
    ]
    in_nodes: set[int] = set()  # positions in `labelled` (two statements may share a millisecond)
    for node in node_results:
        if not node.timing:
            continue
        start = min(timing.started_at for timing in node.timing).timestamp() * 1000
        end = max(timing.completed_at for timing in node.timing).timestamp() * 1000
        statements = [number for number, (at, _) in enumerate(labelled) if start <= at <= end]
        jobs = sum(count for _, at, count in executions if start <= at <= end)
        if statements or jobs:
            work.per_node[node.node.name] = (len(statements), jobs)
        if statements:
            work.node_statements[node.node.name] = [labelled[number][1] for number in statements]
            in_nodes.update(statements)
    outside = [label for number, (_, label) in enumerate(labelled) if number not in in_nodes]
    if outside:
        work.node_statements[""] = outside
