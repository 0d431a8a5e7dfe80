"""Keep the tables up to date in one process: land what is new, then build, cycle after cycle.

    cdc-run --source dataworks_json=/data/dataworks [--source FORMAT=FOLDER ...] --once
    cdc-run --source dataworks_json=/data/dataworks --every 5 [-- DBT BUILD OPTIONS]
    cdc-run --topic debezium_json=inventory.orders,inventory.items --bootstrap-servers HOST:PORT --every 5

A cycle lands the files of each source that no load has landed and the records of each topic
beyond the offsets landed (the loader, in this process), then, when the landing holds batches
that no complete build has taken, runs `dbt build` in this process over the same Spark session
(dbt's programmatic runner), in two steps: what cdc_current reads, then the rest of the build and
every data test (VISIBLE_FIRST). Against `cdc-load` then `dbt build` as two commands, a cycle pays
no JVM start and no metastore opening, and from the second cycle on Spark's compiled code and
Delta's table states are warm. dbt parses the project (and, in the first cycle, is imported) in a
thread while the cycle lands, which waits on Spark; the cycle's dbt invocations share that parse.
A cycle with nothing new runs no build.

State lives in the tables, not in this process: which files and records were landed is in the
landing table (a file is recognised by its content, a record by topic, partition and offset),
which batches were built is in `cdc_load_batches`. A runner killed at any point (SIGKILL) leaves
at most files no Delta commit names and a build that did not finish; the next cycle, of this
runner or a new one, lands the rest and builds what was not built. SIGTERM (and a first Ctrl-C)
stops the runner once its cycle is done.

When cdc_history's last --compact-every commits (default 20: about as many builds, one MERGE each)
hold no OPTIMIZE, the runner compacts its current versions and recent closed versions (macro
cdc_compact_history), which each build's MERGE adds a file to, so that a cycle late in a long run
costs what an early one did; it logs the seconds it took. The cadence is read from the table's
Delta history, so it holds across runner processes and for `--once` under a scheduler.

Files are landed whole: a writer should write a file elsewhere, or under a name starting with
`.` (skipped), and then move it into the folder.

Exit codes: 0 done (or stopped by SIGTERM); 1 the last cycle's build failed; 2 bad arguments or
unreadable input.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdc_dbt_spark.avro import AvroSchemaError, check_schemas
from cdc_dbt_spark.connection import FIRST_TIER_JIT_OPTIONS, SqlConnection, connect
from cdc_dbt_spark.kafka import KafkaSource, KafkaSourceError, add_client_arguments, kafka_source
from cdc_dbt_spark.loader import LANDING_TABLE, configure_logging, iter_files, land, land_topics
from cdc_dbt_spark.settings import (
    SettingsError,
    add_project_arguments,
    parse_vars,
    profiles_dir,
    project_dir,
    project_formats,
    use_project,
)

log = logging.getLogger("cdc_run")

LEDGER_TABLE = "cdc_load_batches"  # built last by a complete build: its newest batch is the watermark
# A cycle's build first runs what cdc_current reads (seeds and models, no tests): a change is
# visible once cdc_history's MERGE commits, not after every side table and data test. Then the
# rest of the build: the other models and every data test, the first step's models' included
# (`empty` indirect selection: excluding a model leaves its tests selected). A failing test
# still keeps cdc_load_batches, and so the watermark, from passing the batches it checked.
VISIBLE_FIRST = "+cdc_current"
# dbt options that choose nodes: with any of them the cycle runs one `dbt build` as given
SELECTING_OPTIONS = ("--select", "-s", "--models", "-m", "--selector", "--indirect-selection")
# `--once` starts a JVM for one cycle, in which the full JIT compiles more than it gains (1,000
# messages at 2M events: 0.94x its wall with FIRST_TIER_JIT_OPTIONS, alternated three times). A
# runner that cycles keeps the full JIT, whose code is faster once compiled.
JAVA_OPTIONS_ENV = "CDC_DRIVER_JAVA_OPTIONS"
# A build that takes at most this many landed messages runs with CDC_EXPRESSION_CODEGEN=false
# (profiles.yml), unless the environment sets it: Spark then interprets the expressions it runs
# outside whole-stage code, whose code it otherwise generates again in every task (Delta's reads
# of each table's log among them), which costs more than it saves over so few rows. `--once`,
# 100k-event warehouse, alternated: 1,000 messages 116-150 s against 143-162 s (four pairs);
# 10,000 messages 151 s against 154 s; a full build of 2M events takes 2.3x as long interpreted.
SMALL_BUILD_MESSAGES = 2_000
EXPRESSION_CODEGEN_ENV = "CDC_EXPRESSION_CODEGEN"


def use_once_java_options(environ: dict[str, str]) -> None:
    """The JVM options of a one-cycle process (FIRST_TIER_JIT_OPTIONS), unless `environ` names its own."""
    environ.setdefault(JAVA_OPTIONS_ENV, FIRST_TIER_JIT_OPTIONS)


@dataclass
class Source:
    """One folder (or file) of messages in one format."""

    source_format: str
    path: str
    # files handed to a load that succeeded, by (size, mtime): not hashed again by this process
    # (the loader would find them landed; this saves reading them every cycle)
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)

    def new_files(self) -> dict[str, tuple[int, int]]:
        files = {}
        for path in iter_files([self.path]):
            status = path.stat()
            signature = (status.st_size, status.st_mtime_ns)
            if self.seen.get(str(path)) != signature:
                files[str(path)] = signature
        return files

    def land(self, runner: Runner, cycle: Cycle) -> None:
        files = self.new_files()
        if not files:
            return
        stats = land(self.source_format, list(files), runner.target, runner.max_batch_messages, runner.cli_vars)
        cycle.messages += stats["messages"]
        cycle.files += stats["files"]
        if not stats["files_unreadable"]:  # an unreadable file is tried again next cycle
            self.seen.update(files)


@dataclass
class TopicSource:
    """Kafka topics of messages in one format: each cycle lands the records beyond those landed."""

    source_format: str
    kafka: KafkaSource

    def land(self, runner: Runner, cycle: Cycle) -> None:
        stats = land_topics(self.source_format, self.kafka, runner.target, runner.cli_vars, runner.max_batch_messages)
        cycle.messages += stats["messages"]
        cycle.records = (cycle.records or 0) + stats["records"]


@dataclass
class Cycle:
    number: int
    messages: int = 0
    files: int = 0
    records: int | None = None  # Kafka records taken (None: no topic is a source)
    # landed and not built when the build started (var cdc_max_batches_per_run may make it take fewer)
    batches_pending: int = 0
    messages_pending: int = 0  # in those batches
    built: bool | None = None  # None: no build was needed
    compacted_seconds: float | None = None  # None: cdc_history was not compacted after this cycle
    lag_seconds: float | None = None
    seconds: float = 0.0


class Runner:
    def __init__(
        self,
        sources: list[Source | TopicSource],
        target: str | None,
        cli_vars: dict[str, Any],
        vars_text: str | None,
        max_batch_messages: int,
        dbt_arguments: list[str],
        compact_every: int = 20,
    ) -> None:
        self.sources = sources
        self.target = target
        self.cli_vars = cli_vars
        self.vars_text = vars_text
        self.max_batch_messages = max_batch_messages
        self.dbt_arguments = dbt_arguments
        self.compact_every = compact_every
        self.builds_since_compaction: int | None = None  # None: no compaction tried by this process
        self.connection: SqlConnection = connect(target, cli_vars)  # starts Spark on a session target
        self.stopping = threading.Event()
        self.manifest: Any = None  # the cycle's parse of the project (dbt's Manifest), for its invocations

    def stop(self, signum: int, _frame: Any) -> None:
        if self.stopping.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        log.info("%s: stopping after this cycle", signal.Signals(signum).name)
        self.stopping.set()

    def _tables(self) -> set[str]:
        """The tables of the target schema (none before anything was landed)."""
        schema = self.connection.schema
        if not self.connection.sql(f"show schemas like '{schema}'"):
            return set()
        return {row[1] for row in self.connection.sql(f"show tables in {schema}")}

    def _pending(self, tables: set[str]) -> tuple[int, int, int]:
        """The newest landing batch a complete build took (macro cdc_batch_watermark), -1 before any,
        and how many landed batches and messages are above it, in one query: the landing is filtered
        by the ledger's max as a scalar subquery, which Spark runs first and prunes its partitions with."""
        if LANDING_TABLE not in tables:
            return -1, 0, 0  # nothing landed: nothing to build, whatever the ledger says
        schema = self.connection.schema
        watermark = f"(select coalesce(max(load_batch_id), -1) from {schema}.{LEDGER_TABLE})"
        if LEDGER_TABLE not in tables:
            watermark = "-1"
        rows = self.connection.sql(
            f"select {watermark}, count(distinct load_batch_id), count(*) from {schema}.{LANDING_TABLE} "
            f"where load_batch_id > {watermark}"
        )
        return int(rows[0][0]), int(rows[0][1]), int(rows[0][2])

    def _lag_seconds(self, watermark: int) -> float | None:
        """Seconds from the newest source commit among the batches just built to now."""
        rows = self.connection.sql(
            "select cast(current_timestamp() as double) - cast(max(commit_ts) as double) "
            f"from {self.connection.schema}.cdc_events where load_batch_id > {watermark}"
        )
        return None if not rows or rows[0][0] is None else float(rows[0][0])

    def _dbt_options(self) -> list[str]:
        options = ["--profiles-dir", str(profiles_dir()), "--project-dir", str(project_dir())]
        options += ["--target", self.target] if self.target else []
        return options + (["--vars", self.vars_text] if self.vars_text else [])

    def _parse(self) -> Any:
        """dbt's parse of the project with the runner's options, its Manifest; None, saying nothing,
        when it fails: the cycle's first invocation then parses, and reports the error, itself."""
        from dbt.cli.main import dbtRunner

        result = dbtRunner().invoke(["--log-level", "none", "parse", *self._dbt_options()])
        return result.result if result.success else None

    def _dbt(self, *arguments: str) -> Any:
        """dbt in this process, with the runner's project, profiles, target and vars, on the cycle's
        parse of the project."""
        from dbt.cli.main import dbtRunner

        return dbtRunner(manifest=self.manifest).invoke([*arguments, *self._dbt_options()])

    def _dbt_build(self, *selection: str) -> bool:
        result = self._dbt("build", *selection, *self.dbt_arguments)
        if not result.success:
            log.error("dbt build failed: %s (see logs/dbt.log); the next cycle builds again", result.exception or "")
            # a failed cdc_history run leaves its cached versions (cdc_history_cache_touched_versions) in
            # the session; its view is named for the invocation, in no later one's way: only the memory goes
            self.connection.release_cache()
        return result.success

    def _compaction_due(self) -> bool:
        """No OPTIMIZE among cdc_history's last `compact_every` commits, and none tried by this process
        in as many builds (an OPTIMIZE with nothing to rewrite commits nothing: not tried every cycle)."""
        if not self.compact_every:
            return False
        if self.builds_since_compaction is not None:
            self.builds_since_compaction += 1
            if self.builds_since_compaction < self.compact_every:
                return False
        commits = self.connection.sql(
            f"describe history {self.connection.schema}.cdc_history limit {self.compact_every}"
        )
        return len(commits) >= self.compact_every and all(commit[4] != "OPTIMIZE" for commit in commits)

    def _compact(self, cycle: Cycle) -> None:
        """cdc_compact_history when due; a failure is logged, and tried again after the next build."""
        if not self._compaction_due():
            return
        started = time.monotonic()
        result = self._dbt("run-operation", "cdc_compact_history")
        if not result.success:
            log.warning("cdc_history not compacted: %s (see logs/dbt.log)", result.exception or "")
            return
        self.builds_since_compaction = 0
        cycle.compacted_seconds = time.monotonic() - started

    def _build(self, cycle: Cycle, started: float) -> bool:
        """`dbt build`; unless the options select nodes themselves, in two steps (VISIBLE_FIRST)."""
        if any(argument.split("=")[0] in SELECTING_OPTIONS for argument in self.dbt_arguments):
            return self._dbt_build()
        if not self._dbt_build("--select", VISIBLE_FIRST, "--indirect-selection", "empty"):
            return False  # nothing after it: the watermark must not pass batches cdc_history did not take
        log.info(
            "cycle %d: %d messages landed, visible in cdc_current %.1f s into the cycle",
            cycle.number,
            cycle.messages,
            time.monotonic() - started,
        )
        return self._dbt_build("--exclude", VISIBLE_FIRST, "--indirect-selection", "empty")

    def cycle(self, number: int) -> Cycle:
        started = time.monotonic()
        cycle = Cycle(number)
        # Spark started (and imported pyspark) before this thread imports dbt, which imports it too
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbt-parse") as parser:
            parsing = parser.submit(self._parse)
            for source in self.sources:
                source.land(self, cycle)
            tables = self._tables()
            watermark, cycle.batches_pending, cycle.messages_pending = self._pending(tables)
            self.manifest = parsing.result()
        if cycle.batches_pending:
            with expression_codegen(cycle.messages_pending > SMALL_BUILD_MESSAGES):
                cycle.built = self._build(cycle, started)
            if cycle.built:
                cycle.lag_seconds = self._lag_seconds(watermark)
                self._compact(cycle)
        cycle.seconds = time.monotonic() - started
        return cycle


@contextmanager
def expression_codegen(compiled: bool) -> Iterator[None]:
    """CDC_EXPRESSION_CODEGEN for the dbt invocations inside (each renders the profile as it starts),
    unless the environment sets it; as it was after."""
    if EXPRESSION_CODEGEN_ENV in os.environ:
        yield
        return
    os.environ[EXPRESSION_CODEGEN_ENV] = "true" if compiled else "false"
    try:
        yield
    finally:
        del os.environ[EXPRESSION_CODEGEN_ENV]


def report(cycle: Cycle) -> None:
    if cycle.built is None:
        log.info("cycle %d: %d messages landed, nothing to build, %.1f s", cycle.number, cycle.messages, cycle.seconds)
        return
    lag = "n/a" if cycle.lag_seconds is None else f"{cycle.lag_seconds:.1f} s"
    landed_from = f"{cycle.files} files" + ("" if cycle.records is None else f" and {cycle.records} Kafka records")
    log.info(
        "cycle %d: %d messages landed from %s, %d batches pending, %s, %.1f s, lag %s",
        cycle.number,
        cycle.messages,
        landed_from,
        cycle.batches_pending,
        "built" if cycle.built else "NOT built (build failed)",
        cycle.seconds,
        lag,
    )
    if cycle.compacted_seconds is not None:
        log.info("cycle %d: cdc_history compacted in %.1f s", cycle.number, cycle.compacted_seconds)


def _format_and_value(option: str, text: str, formats: dict[str, Any], value_name: str) -> tuple[str, str]:
    source_format, separator, value = text.partition("=")
    if not separator or not value:
        raise argparse.ArgumentTypeError(f"{option} takes FORMAT={value_name}, not {text!r}")
    if source_format not in formats:
        raise argparse.ArgumentTypeError(
            f"{option} {text!r}: unknown format {source_format!r}; formats: {', '.join(sorted(formats))}"
        )
    return source_format, value


def parse_source(text: str, formats: dict[str, Any]) -> Source:
    source_format, path = _format_and_value("--source", text, formats, "FOLDER")
    if not Path(path).exists():
        raise argparse.ArgumentTypeError(f"--source {text!r}: no such file or folder: {path}")
    return Source(source_format, path)


def parse_topic_source(text: str, formats: dict[str, Any], args: argparse.Namespace) -> TopicSource:
    source_format, topics = _format_and_value("--topic", text, formats, "TOPIC[,TOPIC...]")
    try:
        return TopicSource(source_format, kafka_source(topics, args))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--topic {text!r}: {exc}") from exc


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    dbt_arguments = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(
        prog="cdc-run",
        description="Land what is new in the sources, then dbt build, in one process: once, or every few seconds.",
        epilog="Options after `--` go to dbt build (both steps of a cycle), e.g. `-- --exclude-resource-type "
        "unit_test`. Formats are declared in dbt_project.yml (var cdc_formats).",
    )
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="FORMAT=FOLDER",
        help="a file or folder of messages in FORMAT (repeat for several)",
    )
    parser.add_argument(
        "--topic",
        action="append",
        default=[],
        metavar="FORMAT=TOPIC[,TOPIC...]",
        help="Kafka topics of messages in FORMAT (repeat for several formats), on --bootstrap-servers",
    )
    add_client_arguments(parser)
    when = parser.add_mutually_exclusive_group(required=True)
    when.add_argument("--once", action="store_true", help="one cycle, then exit (for a scheduler)")
    when.add_argument("--every", type=float, metavar="SECONDS", help="start a cycle every SECONDS until stopped")
    parser.add_argument("--target", default=None, help="dbt target (default: the profile's, i.e. CDC_TARGET or local)")
    parser.add_argument("--vars", default=None, help="vars over dbt_project.yml's, given to the loader and dbt build")
    parser.add_argument("--max-batch-messages", type=int, default=5_000_000, help="as cdc-load's (default 5,000,000)")
    parser.add_argument(
        "--compact-every",
        type=int,
        default=20,
        metavar="BUILDS",
        help="compact cdc_history when its last BUILDS commits (builds) hold no compaction (default 20; "
        "0: never, e.g. when a scheduler runs `dbt run-operation cdc_compact_history`)",
    )
    parser.add_argument("--quiet", action="store_true", help="log warnings only (dbt's own output is not changed)")
    add_project_arguments(parser)
    args = parser.parse_args(argv)
    if args.every is not None and args.every <= 0:
        parser.error(f"--every takes a number of seconds above 0, not {args.every}")
    if args.compact_every < 0:
        parser.error(f"--compact-every takes a number of builds (0 for never), not {args.compact_every}")
    if not args.source and not args.topic:
        parser.error("give at least one --source FORMAT=FOLDER or --topic FORMAT=TOPIC")
    configure_logging(args.quiet)
    try:
        use_project(args.project_dir, args.profiles_dir)
        cli_vars = parse_vars(args.vars)
        formats = project_formats(cli_vars)
        sources: list[Source | TopicSource] = [parse_source(text, formats) for text in args.source]
        sources += [parse_topic_source(text, formats, args) for text in args.topic]
        for source_format in {source.source_format for source in sources}:
            check_schemas(source_format, formats[source_format])
    except (SettingsError, argparse.ArgumentTypeError, AvroSchemaError) as exc:
        print(f"cdc-run: error: {exc}", file=sys.stderr)
        return 2

    if args.once:
        use_once_java_options(os.environ)
    try:
        # the target's connection: a target the profile lacks, or one it cannot render, is one line
        runner = Runner(
            sources, args.target, cli_vars, args.vars, args.max_batch_messages, dbt_arguments, args.compact_every
        )
    except SettingsError as exc:
        print(f"cdc-run: error: {exc}", file=sys.stderr)
        return 2
    # after Spark started, which installs a SIGINT handler of its own (it cancels the running jobs);
    # the caller's handlers are put back on return
    handlers = {signum: signal.signal(signum, runner.stop) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        return run_cycles(runner, args.every)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


def run_cycles(runner: Runner, every: float | None) -> int:
    """One cycle (`every` None), or a cycle every `every` seconds until the runner is stopped."""
    number = 0
    last: Cycle | None = None
    while not runner.stopping.is_set():
        number += 1
        started = time.monotonic()
        try:
            last = runner.cycle(number)
        except (FileNotFoundError, PermissionError, IsADirectoryError, KafkaSourceError) as exc:
            # a file that went away or cannot be read, a topic that cannot be continued: once, an
            # error; in a loop, tried again next cycle
            log.error("%s", exc)
            if every is None:
                return 2
        else:
            report(last)
        if every is None:
            break
        runner.stopping.wait(max(0.0, every - (time.monotonic() - started)))
    log.info("stopped after %d cycles", number)
    return 1 if last is not None and last.built is False else 0


if __name__ == "__main__":
    sys.exit(main())
