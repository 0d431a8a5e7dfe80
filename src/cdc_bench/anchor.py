"""Benchmark anchor: Spark's own Auto CDC (Spark Declarative Pipelines, SCD type 2) over canonical events.

    python -m cdc_bench.anchor EVENTS_PATH WORK_DIR

EVENTS_PATH is a parquet folder of canonical change events (table_id, key_json, op, sequence_key, commit_ts,
after_json). The anchor defines one pipeline: a temporary view streaming that folder, a streaming table
``anchor_scd2`` and ``pyspark.pipelines.create_auto_cdc_flow`` into it with keys [table_id, key_json],
sequence_by sequence_key, apply_as_deletes op = 'delete', stored_as_scd_type 2 (all event columns kept).

Pipelines run through Spark Connect, so this starts a private Spark Connect server (spark-submit of
SparkConnectServer from the pyspark wheel, loopback, free port, in-memory catalog, warehouse, Derby home,
pipeline storage and logs all under WORK_DIR), registers the graph with the same calls `spark-pipelines run` makes,
times the run (graph creation, registration, execution until the event stream ends), counts the target rows and
stops the server. Requires the pyspark[pipelines] extras (grpcio, grpcio-status, googleapis-common-protos, pandas,
pyarrow, zstandard, pyyaml) in the running interpreter and a Java runtime.

``run_anchor`` never raises: it returns {"ran", "seconds", "rows", "reason"} and, when the anchor cannot run, the
reason says which step failed, the error, and what would be needed.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
import typing
from pathlib import Path
from typing import Any

TARGET = "anchor_scd2"
SOURCE_VIEW = "anchor_events"
KEYS = ["table_id", "key_json"]
SEQUENCE_BY = "sequence_key"
APPLY_AS_DELETES = "op = 'delete'"
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"

DEFINITIONS = '''"""Anchor pipeline: Auto CDC (SCD type 2) over canonical change events (from cdc_bench.anchor)."""
import json

from pyspark import pipelines as dp
from pyspark.sql.types import StructType

EVENTS_PATH = {events_path!r}
SCHEMA = StructType.fromJson(json.loads({schema_json!r}))


@dp.temporary_view(name={source!r})
def anchor_events():
    return spark.readStream.schema(SCHEMA).parquet(EVENTS_PATH)  # noqa: F821 (spark is injected by the loader)


dp.create_streaming_table(name={target!r}, format={table_format!r})
dp.create_auto_cdc_flow(
    target={target!r},
    source={source!r},
    keys={keys!r},
    sequence_by={sequence_by!r},
    apply_as_deletes={apply_as_deletes!r},
    stored_as_scd_type=2,
)
'''

SPEC = """name: bench_anchor
storage: {storage}
libraries:
  - glob:
      include: transformations/**
"""


_NO_MERGE = (
    "cannot run here: Spark Connect server, pipeline graph and Auto CDC flow registration all worked, but the "
    "run stops at table materialization ({timing}) with: {detail} -- Spark's Auto CDC applies each micro-batch "
    "with MERGE, and DatasetManager.requireAutoCdcTargetSupportsRowLevelOps requires the target table to implement "
    "the DSv2 interface SupportsRowLevelOperations. No table in the pyspark {version} wheel does: the session "
    "catalog's built-in formats (parquet, orc, json, csv, hive serde) are v1 tables without row-level operations, "
    "and Spark itself only has test-only in-memory implementations, not shipped. Needed: a MERGE-capable "
    "connector built for Spark 4.3 / Scala 2.13 (Delta Lake's delta-spark or Iceberg's iceberg-spark-runtime jar "
    "plus its catalog/extension conf), which only Maven distributes and this machine cannot reach; with such a "
    "jar, call run_anchor(..., jars=[...], spark_conf={{...}}, table_format=...). Server log: {log}"
)


def scd_types_accepted(create_auto_cdc_flow: Any) -> set[str] | None:
    """The SCD types `create_auto_cdc_flow` declares it accepts (its `stored_as_scd_type` Literal, as
    text); None when its signature does not say."""
    parameter = inspect.signature(create_auto_cdc_flow).parameters.get("stored_as_scd_type")
    if parameter is None or parameter.annotation is inspect.Parameter.empty:
        return None
    annotation = parameter.annotation
    if isinstance(annotation, str):  # postponed annotations (from __future__ import annotations)
        annotation = typing.get_type_hints(create_auto_cdc_flow)["stored_as_scd_type"]
    pending, accepted = [annotation], set()
    while pending:
        kind = pending.pop()
        if typing.get_origin(kind) is typing.Literal:
            accepted |= {str(value) for value in typing.get_args(kind)}
        else:
            pending += typing.get_args(kind)
    return accepted or None


def _result(ran: bool, seconds: float | None, rows: int | None, reason: str) -> dict[str, Any]:
    return {"ran": ran, "seconds": seconds, "rows": rows, "reason": reason}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def _missing_client_modules() -> list[str]:
    missing = []
    for module in ("grpc", "grpc_status", "google.rpc", "pandas", "pyarrow", "zstandard", "yaml"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    return missing


class _ConnectServer:
    """A private Spark Connect server (spark-submit of SparkConnectServer from the pyspark wheel)."""

    def __init__(self, work: Path, port: int, extra_conf: dict[str, str], jars: list[str]) -> None:
        import pyspark

        self.spark_home = Path(pyspark.__file__).parent
        self.work = work
        self.port = port
        self.log = work / "connect-server.log"
        self.process: subprocess.Popen[bytes] | None = None
        metastore = work / "metastore"
        conf = {
            "spark.master": "local[2]",
            "spark.driver.memory": "1g",
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(port),
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.warehouse.dir": (work / "warehouse").as_uri(),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={metastore / 'db'};create=true",
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={metastore}",
            "spark.local.dir": str(work / "tmp"),
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "4",
            "spark.sql.session.timeZone": "UTC",
        }
        self.command = [
            str(self.spark_home / "bin" / "spark-submit"),
            "--class",
            SERVER_CLASS,
            "--name",
            "bench-anchor",
        ]
        conf.update(extra_conf)
        if jars:
            self.command += ["--jars", ",".join(jars)]
        for key, value in conf.items():
            self.command += ["--conf", f"{key}={value}"]

    def start(self, timeout: float) -> None:
        for folder in ("warehouse", "metastore", "tmp"):
            (self.work / folder).mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env["SPARK_HOME"] = str(self.spark_home)
        env["PYSPARK_PYTHON"] = sys.executable
        env.pop("SPARK_REMOTE", None)
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                self.command,
                cwd=self.work,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"Spark Connect server exited with code {self.process.returncode}; log tail:\n{_tail(self.log)}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.5)
        raise TimeoutError(f"Spark Connect server not listening after {timeout:.0f}s; log tail:\n{_tail(self.log)}")

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        # The server runs in its own session (process group) that only it and its children belong to.
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass


def _write_pipeline(events_path: str, schema_json: str, work: Path, table_format: str | None) -> Path:
    project = work / "pipeline"
    if project.exists():
        shutil.rmtree(project)
    (project / "transformations").mkdir(parents=True)
    storage = work / "storage"
    if storage.exists():
        shutil.rmtree(storage)
    storage.mkdir(parents=True)
    definitions = DEFINITIONS.format(
        events_path=str(Path(events_path).resolve()),
        schema_json=schema_json,
        source=SOURCE_VIEW,
        target=TARGET,
        keys=KEYS,
        sequence_by=SEQUENCE_BY,
        apply_as_deletes=APPLY_AS_DELETES,
        table_format=table_format,
    )
    (project / "transformations" / "anchor_flow.py").write_text(definitions)
    spec = project / "spark-pipeline.yml"
    spec.write_text(SPEC.format(storage=storage.as_uri()))
    return spec


def _run_pipeline(spark: Any, spec_path: Path, events_log: list[str]) -> None:
    """What `spark-pipelines run --spec SPEC` does after creating its session (pyspark/pipelines/cli.py)."""
    from pyspark.pipelines.cli import load_pipeline_spec, register_definitions
    from pyspark.pipelines.spark_connect_graph_element_registry import SparkConnectGraphElementRegistry
    from pyspark.pipelines.spark_connect_pipeline import create_dataflow_graph, start_run

    spec = load_pipeline_spec(spec_path)
    graph_id = create_dataflow_graph(
        spark, default_catalog=spec.catalog, default_database=spec.database, sql_conf=spec.configuration
    )
    registry = SparkConnectGraphElementRegistry(spark, graph_id)
    with contextlib.redirect_stdout(sys.stderr):  # the loader logs to stdout; keep stdout for the JSON result
        register_definitions(spec_path, registry, spec, spark, graph_id)
    results = start_run(
        spark, graph_id, full_refresh=[], full_refresh_all=True, refresh=[], dry=False, storage=spec.storage
    )
    for result in results:
        if "pipeline_event_result" in result:
            event = result["pipeline_event_result"].event
            events_log.append(f"{event.timestamp.ToDatetime().isoformat()} {event.message}")


def run_anchor(
    events_path: str,
    work_dir: str,
    *,
    table_format: str | None = None,
    spark_conf: dict[str, str] | None = None,
    jars: list[str] | None = None,
    server_timeout: float = 600.0,
) -> dict[str, Any]:
    """Run Spark's Auto CDC (SCD type 2) over EVENTS_PATH; return {"ran", "seconds", "rows", "reason"}.

    table_format, spark_conf and jars are for a MERGE-capable target if one is ever available (e.g. a Delta or
    Iceberg runtime jar with its catalog conf); with the defaults the target is the session catalog's parquet.
    """
    work = Path(work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if not Path(events_path).exists():
        return _result(False, None, None, f"events path {events_path} does not exist")
    try:
        import pyspark
        from pyspark.pipelines import create_auto_cdc_flow
    except ImportError as error:
        return _result(False, None, None, f"pyspark.pipelines.create_auto_cdc_flow is not importable: {error}")
    accepted = scd_types_accepted(create_auto_cdc_flow)
    if accepted is not None and "2" not in accepted:
        # known from the signature: no Spark Connect server is started to learn it
        return _result(
            False,
            None,
            None,
            f"pyspark {pyspark.__version__}'s create_auto_cdc_flow accepts stored_as_scd_type "
            f"{' or '.join(sorted(accepted))} only; the anchor needs SCD type 2",
        )
    missing = _missing_client_modules()
    if missing:
        return _result(
            False,
            None,
            None,
            f"Spark Declarative Pipelines run over Spark Connect, whose Python client needs modules {missing} "
            f"(pip install 'pyspark[pipelines]=={pyspark.__version__}' extras) in {sys.executable}",
        )
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return _result(False, None, None, "no Java runtime (java not on PATH, JAVA_HOME unset)")

    server = _ConnectServer(work, _free_port(), dict(spark_conf or {}), list(jars or []))
    events_log: list[str] = []
    stage = "starting the Spark Connect server"
    spark = None
    server_seconds = None
    started = time.perf_counter()
    try:
        server.start(server_timeout)
        from pyspark.sql import SparkSession

        stage = "connecting to the Spark Connect server"
        spark = (
            SparkSession.builder.remote(f"sc://127.0.0.1:{server.port}")
            .config("spark.sql.connect.serverStacktrace.enabled", "false")
            .getOrCreate()
        )
        spark.sql("SELECT 1").collect()
        server_seconds = time.perf_counter() - started
        # Query functions may not trigger analysis, so the source schema is read here and written into the pipeline.
        stage = f"reading the schema of {events_path}"
        schema_json = spark.read.parquet(str(Path(events_path).resolve())).schema.json()
        spec_path = _write_pipeline(events_path, schema_json, work, table_format)

        stage = "running the Auto CDC pipeline"
        started = time.perf_counter()
        _run_pipeline(spark, spec_path, events_log)
        seconds = time.perf_counter() - started

        stage = f"reading the target table {TARGET}"
        target = spark.read.table(TARGET)
        columns = target.columns
        rows = target.count()
        end_column = next((c for c in columns if c.upper() == "__END_AT"), None)
        current = target.where(f"`{end_column}` IS NULL").count() if end_column else None
        (work / "pipeline-events.log").write_text("\n".join(events_log) + "\n")
        return _result(
            True,
            round(seconds, 3),
            rows,
            f"ran: pyspark {pyspark.__version__} Auto CDC SCD2 into streaming table {TARGET} (columns {columns}); "
            f"{rows} history rows, {current} current; pipeline run {seconds:.1f}s (graph + registration + full "
            f"refresh execution), server start {server_seconds:.1f}s not included; note SCD2 has no truncate "
            "semantics, so 'truncate' events are applied as upserts. Events: "
            f"{work / 'pipeline-events.log'}",
        )
    except Exception as error:
        (work / "pipeline-events.log").write_text("\n".join(events_log) + "\n")
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        elapsed = time.perf_counter() - started
        timing = f"server start {server_seconds:.1f}s, then failed after {elapsed:.1f}s" if server_seconds else ""
        if "AUTOCDC_TARGET_DOES_NOT_SUPPORT_MERGE" in detail:
            return _result(
                False,
                None,
                None,
                _NO_MERGE.format(detail=detail, timing=timing, log=server.log, version=pyspark.__version__),
            )
        last_events = "\n".join(events_log[-8:])
        return _result(
            False,
            None,
            None,
            f"failed while {stage} ({timing}): {detail}\nlast pipeline events:\n{last_events}\n"
            f"server log: {server.log}\nserver log tail:\n{_tail(server.log, 15)}",
        )
    finally:
        if spark is not None:
            with contextlib.suppress(Exception):
                spark.stop()
        server.stop()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    result = run_anchor(args[0], args[1])
    print(json.dumps(result, indent=2))
    return 0 if result["ran"] else 1


if __name__ == "__main__":
    sys.exit(main())
