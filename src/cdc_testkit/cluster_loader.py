"""Test kit: the loader on target `cluster`, in a process of its own that lands on request.

A process holds one SparkContext: the test process runs the embedded Spark, so the cluster's
loads run here, as one application on the cluster (one JVM start for every load). Reads one
JSON request per line on stdin ({"schema", "format", "paths", "max_batch_messages"}); answers each with
one line `RESULT {...}`: the load's counts (or its error), when it started and finished, and
the application's id and UI address.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

from cdc_dbt_spark.loader import land


def main() -> int:
    from pyspark.sql import SparkSession

    # the loader's progress in this process's stderr (the test's cluster-loader.log)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for line in sys.stdin:
        request = json.loads(line)
        os.environ["CDC_SCHEMA"] = request["schema"]
        result: dict = {"started": time.time()}
        try:
            result["stats"] = land(
                request["format"], request["paths"], "cluster", request.get("max_batch_messages", 5_000_000)
            )
        except BaseException as exc:  # the test reports it; this process goes on serving
            result["error"] = f"{type(exc).__name__}: {exc}"
        result["finished"] = time.time()
        active = SparkSession.getActiveSession()
        if active is not None:
            result["app_id"] = active.sparkContext.applicationId
            result["ui"] = active.sparkContext.uiWebUrl
        print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
