"""What a dbt invocation asks of the Spark in this process, counted: the SQL statements dbt sends (through
dbt-spark's session cursor) and the Spark jobs they run (from Spark's status store, which Spark's own
listener of SQL executions fills: every job of a statement, Delta's bookkeeping included), in all and per dbt
node. The fixed cost of a build is in these counts more than in its seconds, which drift with the machine.
Only for builds in this process (target local, method session): a Thrift server's work is not seen here."""

from __future__ import annotations

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

    def summary(self, top: int = 5) -> dict[str, Any]:
        heaviest = sorted(self.per_node.items(), key=lambda item: (-item[1][1], -item[1][0]))[:top]
        return {
            "statements": self.statements,
            "jobs": self.jobs,
            "heaviest_nodes": {name: {"statements": s, "jobs": j} for name, (s, j) in heaviest},
        }


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
def counted(spark: Any) -> Iterator[tuple[SparkWork, list]]:
    """Counts the statements and jobs of what runs inside the block; yields the counts (filled when the block
    ends) and a list to put dbt's node results in (dbtRunner's `result.result`), for the counts per node."""
    from dbt.adapters.spark import session

    work, node_results = SparkWork(), []
    first = max((execution[0] for execution in _executions(spark, -1)), default=-1)
    sent: list[float] = []
    execute = session.Cursor.execute

    def counting_execute(cursor: Any, sql: str, *parameters: Any) -> Any:
        sent.append(time.time() * 1000)
        return execute(cursor, sql, *parameters)

    session.Cursor.execute = counting_execute
    try:
        yield work, node_results
    finally:
        session.Cursor.execute = execute
    executions = _executions(spark, first)
    work.statements, work.jobs = len(sent), sum(jobs for _, _, jobs in executions)
    for node in node_results:
        if not node.timing:
            continue
        start = min(timing.started_at for timing in node.timing).timestamp() * 1000
        end = max(timing.completed_at for timing in node.timing).timestamp() * 1000
        statements = sum(start <= at <= end for at in sent)
        jobs = sum(count for _, at, count in executions if start <= at <= end)
        if statements or jobs:
            work.per_node[node.node.name] = (statements, jobs)
