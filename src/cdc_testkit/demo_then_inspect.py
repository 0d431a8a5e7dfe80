"""Run the demo as `make demo` does, then read back what test_demo_docs_freshness checks.

    python -m cdc_testkit.demo_then_inspect RESULT.json      (from the project root)

Started by test_demo_docs_freshness in a copy of the project with nothing beside it. Every
step after the demo (queries, `dbt source freshness`, `dbt docs generate`) runs in this
same process, on the demo's SparkSession, so the check costs one Spark start.
"""

from __future__ import annotations

import datetime as dt
import json
import runpy
import sys


def as_text(value: object) -> str:
    """Times without their zone (the session's is UTC), so that Spark's and dbt's compare."""
    return str(value.replace(tzinfo=None) if isinstance(value, dt.datetime) else value)


def main(out: str) -> int:
    sys.argv = ["scripts/demo.py"]
    try:
        runpy.run_path("scripts/demo.py", run_name="__main__")
    except SystemExit as exit:
        if exit.code:
            return int(exit.code)

    from dbt.cli.main import dbtRunner

    from cdc_dbt_spark.connection import connect

    connection = connect()

    def rows(sql: str) -> list[list]:
        return [list(row) for row in connection.sql(sql.format(schema=connection.schema))]

    freshness = dbtRunner().invoke(["source", "freshness", "--profiles-dir", "profiles"])
    result = {
        "ledger": rows("select source_format, sum(messages_landed) from {schema}.cdc_load_batches group by 1"),
        "history_formats": rows("select distinct source_format from {schema}.cdc_history"),
        "loader_errors": rows(
            "select source_format, loader_error from {schema}.raw_cdc_messages where loader_error is not null"
        ),
        "quarantine": rows("select source_format, quarantine_reason from {schema}.cdc_quarantine"),
        "progress": rows("select source_format, max(progress_ts) from {schema}.cdc_stream_progress group by 1"),
        "freshness": [[r.node.name, str(r.status), r.max_loaded_at] for r in freshness.result.results],
        "docs_generated": dbtRunner().invoke(["docs", "generate", "--profiles-dir", "profiles"]).success,
    }
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, default=as_text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
