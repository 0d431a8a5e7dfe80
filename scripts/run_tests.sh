#!/usr/bin/env bash
# The whole test suite: lint (ruff, sqlfluff) then pytest, which lands messages and runs
# dbt build (models, data tests, unit tests) on the local target, on a Thrift server and on a
# Spark standalone cluster with a PostgreSQL metastore (each started and stopped by its tests).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=.venv/bin/python
mkdir -p artifacts
export CDC_SPARK_HOME="${CDC_SPARK_HOME:-$PWD/artifacts/spark-lint}"

# the JVM class archive (see Makefile, setup) is made while the lint, which uses one core, runs
archive_log=artifacts/class_archive.log
"$PYTHON" -m cdc_dbt_spark.class_archive >"$archive_log" 2>&1 &
archive=$!

echo "== ruff"
.venv/bin/ruff check src scripts tests
.venv/bin/ruff format --check src scripts tests

echo "== sqlfluff (dbt templater, sparksql)"
# two processes: 28 s against 45 s for one (the templater's compiling is most of it)
.venv/bin/sqlfluff lint models tests --disable-progress-bar --processes 2
# the integration project (integration_tests/, the SCD2 core rule by rule) with its own config
(cd integration_tests && ../.venv/bin/dbt deps --profiles-dir ../profiles --quiet && ../.venv/bin/sqlfluff lint models macros tests --disable-progress-bar)

wait "$archive" || { echo "making the class archive failed; see $archive_log" >&2; exit 1; }

echo "== pytest"
unset CDC_SPARK_HOME
set +e
# two workers (one per core), each with its own Spark; a module's tests stay on one worker, and
# modules go to workers in collection order (conftest puts the slowest first), not by test count
"$PYTHON" -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=8 "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure" >&2
    exit 1
fi
exit "$status"
