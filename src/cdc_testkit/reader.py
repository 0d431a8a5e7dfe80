"""A reader that queries a Delta table in a loop while builds write it (test_delta_tables).

    python -m cdc_testkit.reader TABLE_PATH OUT_FILE STOP_FILE

Its own process and Spark, without the metastore (the embedded one admits one process): it reads
the table by path. Each read appends one JSON line to OUT_FILE: when it started and ended, and
the fingerprint of the current versions it saw (`fingerprint_sql`). It stops once STOP_FILE exists.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from cdc_dbt_spark.connection import end_spark, local_spark


def fingerprint_sql(table: str) -> str:
    """The current versions of cdc_history `table` in one row: how many, how many keys, and an
    order-free hash of what each is."""
    return (
        "select count(*), count(distinct table_id, key_json), "
        "sum(xxhash64(table_id, key_json, version_number, valid_from_sequence, is_deleted)) "
        f"from {table} where is_current"
    )


def main(argv: list[str] | None = None) -> int:
    path, out_file, stop_file = (argv or sys.argv[1:])[:3]
    spark = local_spark()
    try:
        with Path(out_file).open("a") as out:
            out.write(json.dumps({"ready": time.time()}) + "\n")
            out.flush()
            while not Path(stop_file).exists():
                started = time.time()
                rows, keys, digest = spark.sql(fingerprint_sql(f"delta.`{path}`")).collect()[0]
                out.write(json.dumps({"started": started, "ended": time.time(), "seen": [rows, keys, digest]}) + "\n")
                out.flush()
    finally:
        end_spark(spark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
