#!/usr/bin/env bash
# The test suite, by tier (CONTRIBUTING.md):
#   scripts/run_tests.sh fast [pytest args]  ruff, then pytest -m "not e2e" (sqlfluff beside it): every format,
#                                            the invariants, bad input, typed tables, Delta's guarantees,
#                                            dbt builds on the embedded Spark (make test)
#   scripts/run_tests.sh e2e [pytest args]   pytest -m e2e: the Thrift server, the cluster with PostgreSQL,
#                                            the Kafka broker, killed processes, the fresh-clone demo and
#                                            the docs site in Chromium (make test-all runs it after fast)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=.venv/bin/python
mkdir -p artifacts
tier="${1:-fast}"
shift || true

case "$tier" in
fast)
    selection="not e2e"
    # single tests to the workers, the tests of one shared build (cdc_testkit.shared_rounds) as a group
    distribution=loadgroup
    # three workers on the two cores: four runs on one clean clone, alternated, took 866 and 959 s
    # against 932 and 1,016 s for two (the CPU idle 1.3-1.5 % against 3.6 %: a worker planning on
    # one thread or running dbt's Python leaves a little of a core; that is a third of the gain)
    workers=3
    export CDC_SPARK_HOME="${CDC_SPARK_HOME:-$PWD/artifacts/spark-lint}"
    # the JVM class archive (see Makefile, setup), when it is missing or older than what it is made
    # from (a clean clone), is made while the lint runs; a set-up checkout keeps its own
    archive_log=artifacts/class_archive.log
    archive=""
    if ! make --question .venv/spark-classes.jsa 2>/dev/null; then
        "$PYTHON" -m cdc_dbt_spark.class_archive >"$archive_log" 2>&1 &
        archive=$!
    fi

    echo "== ruff"
    .venv/bin/ruff check src scripts tests
    .venv/bin/ruff format --check src scripts tests

    # sqlfluff runs beside pytest, not before it: its templater's JVM start, dbt parse and compile
    # leave the two cores half idle, as do the test workers' JVM starts (two clean clones, one after
    # the other: 890 s against 997 s, the tests' worker-seconds unchanged). Its output is printed
    # when pytest ends; a lint failure fails the tier
    lint_log=artifacts/sqlfluff.log
    set -m  # the lint in a process group of its own, stopped as one with the tier (Ctrl-C, a failure)
    (
        status=0
        # the integration project (integration_tests/, the SCD2 core rule by rule), with its own
        # config, beside the project's lint, each templater with its own Spark metastore (one process
        # can open an embedded one): 85 s against 108 s one after the other
        integration_log=artifacts/sqlfluff_integration_tests.log
        (cd integration_tests && export CDC_SPARK_HOME="$CDC_SPARK_HOME-integration_tests" &&
            ../.venv/bin/dbt deps --profiles-dir ../profiles --quiet &&
            ../.venv/bin/sqlfluff lint models macros tests --disable-progress-bar) >"$integration_log" 2>&1 &
        integration=$!
        # two processes: 28 s against 45 s for one (the templater's compiling is most of it)
        .venv/bin/sqlfluff lint models tests --disable-progress-bar --processes 2 || status=1
        if wait "$integration"; then
            echo "integration_tests: sqlfluff found no problem"
        else
            cat "$integration_log"
            echo "sqlfluff failed on integration_tests/ (above; $integration_log)"
            status=1
        fi
        exit "$status"
    ) >"$lint_log" 2>&1 &
    lint=$!
    set +m
    trap 'kill -- -"$lint" 2>/dev/null || true' EXIT

    if [ -n "$archive" ]; then
        wait "$archive" || { echo "making the class archive failed; see $archive_log" >&2; exit 1; }
    fi
    unset CDC_SPARK_HOME
    ;;
e2e)
    selection="e2e"  # the class archive is make setup's (Makefile, test-e2e)
    # whole modules: a module's broker, cluster or Thrift server starts once
    distribution=loadfile
    workers=2  # one per core: the modules' own services and processes run beside them
    ;;
*)
    echo "usage: scripts/run_tests.sh fast|e2e [pytest arguments]: got tier '$tier'" >&2
    exit 2
    ;;
esac

echo "== pytest ($tier tier: -m \"$selection\")"
set +e
# each worker with its own Spark; work goes to the workers in collection order (conftest puts the
# slowest first), not by test count
"$PYTHON" -m pytest -n "$workers" --dist "$distribution" --no-loadscope-reorder --durations=0 -m "$selection" "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure" >&2
    status=1
fi
if [ -n "${lint:-}" ]; then
    echo "== sqlfluff (dbt templater, sparksql; ran beside pytest)"
    lint_status=0
    wait "$lint" || lint_status=$?
    trap - EXIT
    cat "$lint_log"
    if [ "$lint_status" -ne 0 ]; then
        echo "sqlfluff found problems (above; $lint_log)" >&2
        [ "$status" -ne 0 ] || status=1
    fi
fi
exit "$status"
