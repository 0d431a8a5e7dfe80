"""The hand-written SCD2 MERGE of Delta's documentation (cdc_bench.hand_written) as its own process: the
messages under FOLDER merged into the Delta history at HISTORY, in a fresh JVM with the `local` target's
Spark settings. The bench times this process from outside, JVM start included: the anchor of an increment
landed and built as a user runs it (two processes, steps.user_run).

    python -m cdc_bench.hand_merge_process --format dataworks_json HISTORY FOLDER
"""

from __future__ import annotations

import argparse

from cdc_bench.hand_written import HAND_MERGE
from cdc_dbt_spark.connection import local_spark


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_bench.hand_merge_process",
        description="Merge the messages under FOLDER into the Delta history at HISTORY by hand, as its own process.",
    )
    parser.add_argument("--format", required=True, choices=sorted(HAND_MERGE), help="the messages' format")
    parser.add_argument("history", help="the Delta history table's folder (hand_written's versions)")
    parser.add_argument("folder", help="the increment's message files")
    args = parser.parse_args(argv)
    _, merge = HAND_MERGE[args.format]
    spark = local_spark()
    merge(spark, spark.read.text(args.folder), args.history)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
