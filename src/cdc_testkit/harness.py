"""The end-to-end test harness: land messages, run dbt, read the tables back.

Everything runs in one process: the loader and dbt (through dbtRunner) share one in-process
SparkSession, so a test run pays for one JVM start. Each scenario gets its own schema
(CDC_SCHEMA), and each test process its own warehouse and metastore (CDC_SPARK_HOME, set by
the suite's conftest.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cdc_dbt_spark.connection import connect
from cdc_dbt_spark.loader import land
from cdc_dbt_spark.settings import parse_vars, use_project
from cdc_testkit import PROJECT_ROOT

use_project(PROJECT_ROOT)  # the in-process loader works on this checkout, whatever the current folder

# the third-party samples the tests read: ../shared/thirdparty beside the checkout (a git worktree
# may sit deeper: the nearest one above it); the suite's conftest stops the run if there is none
THIRDPARTY = next(
    (
        folder / "shared" / "thirdparty"
        for folder in PROJECT_ROOT.parents
        if (folder / "shared" / "thirdparty").is_dir()
    ),
    PROJECT_ROOT.parent / "shared" / "thirdparty",
)


# a data test's result message when it sent no query (macros/materializations/test.sql)
NOT_SENT = "NOTHING WRITTEN TO TEST"


class Project:
    """One dbt project state in its own schema."""

    # dbt's target folders of this process's projects, one per schema: dbt parses the project
    # anew when the profile's schema differs from the last parse's (1.5 s), partially when not (0.25 s)
    targets: Path

    def __init__(self, schema: str, target: str = "local") -> None:
        self.schema = schema
        self.target = target
        self.untested_builds = False  # a build ran without data tests since the last tested one

    def activate(self) -> None:
        """Points the loader, dbt and connect() of this process at this project (its schema, target
        and dbt target folder)."""
        os.environ["CDC_SCHEMA"] = self.schema
        os.environ["CDC_TARGET"] = self.target
        os.environ["DBT_TARGET_PATH"] = str(self.targets / self.schema)

    def land(self, source_format: str, *paths: Path | str, max_batch_messages: int = 5_000_000) -> dict[str, int]:
        self.activate()
        return land(source_format, [str(path) for path in paths], self.target, max_batch_messages)

    def dbt(self, *args: str, project_dir: Path = PROJECT_ROOT, check: bool = True, callbacks: list | None = None):
        """Run dbt in this project's schema; with check, fails the test unless dbt succeeds;
        `callbacks` receive dbt's events (its log messages). Returns dbt's result."""
        from dbt.cli.main import dbtRunner

        self.activate()
        runner = dbtRunner(callbacks=callbacks or [])
        result = runner.invoke([*args, "--profiles-dir", "profiles", "--project-dir", str(project_dir)])
        if check:
            assert result.success, f"dbt {' '.join(args)} failed: {result.exception or result.result}"
        return result

    def build(
        self,
        *args: str,
        tests: bool = True,
        unit_tests: bool = False,
        typed_tables: bool = False,
        callbacks: list | None = None,
    ) -> None:
        """dbt build of seeds, models and data tests; tests=False leaves the data tests out (they
        run once, at the end of a scenario, then over whole tables: by default they check only
        the latest run, see var cdc_test_scope). The unit tests do not depend on landed data: they
        run once, in the demo's build (test_demo_docs_freshness), and where unit_tests=True asks.
        The typed tables (models/marts/typed) read only the table they are configured for: the
        demo and test_typed_tables build them, other scenarios only where typed_tables=True asks
        (5 of a small build's 34 nodes). The seeds load in the project's first build only (the
        seed materialization leaves an unchanged seed as it is). `callbacks` as dbt() takes them."""
        skip = [] if tests else ["--exclude-resource-type", "test"]
        skip += [] if unit_tests else ["--exclude-resource-type", "unit_test"]
        skip += [] if typed_tables else ["--exclude", "path:models/marts/typed"]
        # a build without data tests passes the scope the next tested build will (it is a data tests'
        # var): dbt parses the whole project again when an invocation's vars differ from the last one's
        if not tests or self.untested_builds:
            args = with_vars(args, cdc_test_scope="all")
        self.untested_builds = not tests
        self.dbt("build", *args, *skip, callbacks=callbacks)

    def query(self, sql: str) -> list[tuple]:
        self.activate()
        connection = connect(self.target)
        try:
            return connection.sql(sql.format(schema=self.schema))
        finally:
            connection.close()

    def history(self) -> list[tuple]:
        """cdc_history as comparable tuples, in key and version order."""
        return self.query(
            "select table_id, key_json, version_number, valid_from, valid_to, is_current, "
            "is_deleted, op, to_json(row_image), valid_from_sequence, valid_to_sequence "
            "from {schema}.cdc_history order by table_id, key_json, version_number"
        )

    def current(self) -> list[tuple]:
        return self.query(
            "select table_id, key_json, to_json(row_image) from {schema}.cdc_current order by table_id, key_json"
        )


def with_vars(args: tuple[str, ...], **values: object) -> tuple[str, ...]:
    """dbt arguments with `values` added to their --vars (dbt takes one --vars)."""
    args = list(args)
    if "--vars" in args:
        at = args.index("--vars")
        values = {**parse_vars(args.pop(at + 1)), **values}
        args.pop(at)
    return (*args, "--vars", json.dumps(values))


def write_jsonl(path: Path, messages: list[dict | str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for message in messages:
            text = message if isinstance(message, str) else json.dumps(message)
            handle.write(text + "\n")
    return path


@contextmanager
def jvm_log(level: str = "WARN") -> Iterator[list[str]]:
    """The lines this process's Spark JVM logs at `level` or above while the block runs, from every
    logger (log4j2, an appender of its own on the root logger); the list is filled when the block
    ends. Spark must be running (a dbt or loader call before the block)."""
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    log4j = jvm.org.apache.logging.log4j
    context = log4j.LogManager.getContext(False)
    config = context.getConfiguration()
    writer = jvm.java.io.StringWriter()
    layout = log4j.core.layout.PatternLayout.newBuilder().withPattern("%p %c: %m%n%ex").build()
    appender = log4j.core.appender.WriterAppender.createAppender(layout, None, writer, "cdc-test-capture", False, True)
    appender.start()
    config.addAppender(appender)
    root = config.getRootLogger()
    root.addAppender(appender, log4j.Level.toLevel(level), None)
    context.updateLoggers()
    lines: list[str] = []
    try:
        yield lines
    finally:
        root.removeAppender("cdc-test-capture")
        context.updateLoggers()
        appender.stop()
        lines.extend(writer.toString().splitlines())
