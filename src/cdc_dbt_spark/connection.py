"""One way to reach the project's Spark from Python: the same profile dbt uses.

The loader, the demo, the tests and the benchmark open SQL connections through
`connect()`, so they see exactly the warehouse and metastore that `dbt build`
sees for the chosen target (`local`: in-process Spark; `thrift`: a Spark
Thrift Server; `cluster`: the Thrift server of a Spark standalone cluster, whose
applications all run with the target's `spark_conf`, see `cluster_conf()`).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cdc_dbt_spark.locks import hold_embedded_metastore, release_embedded_metastores
from cdc_dbt_spark.settings import profile_target, project_dir

# Spark runs the loader's tasks in Python workers started with PYSPARK_PYTHON, by default the
# `python3` on PATH; they need this interpreter, where the package and pyarrow are installed.
# Set before any SparkContext starts (dbt's included), since a context keeps the one it began with.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

log = logging.getLogger(__name__)

# Driver JVM options for a short-lived process (the `local` target's CDC_DRIVER_JAVA_OPTIONS,
# profiles.yml): the JIT's first tier only, which compiles less than a few builds would gain, with
# the tiered default's code cache (alone the first tier gets 48 MB, which a Spark driver outgrows).
# `cdc-run --once` runs with them (cdc_dbt_spark.runner), the test suite's JVMs too (cdc_testkit,
# where they were measured).
FIRST_TIER_JIT_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"


@dataclass
class SqlConnection:
    """A minimal SQL runner over either a SparkSession or a PyHive cursor."""

    target: str
    schema: str
    _spark: Any = None
    _cursor: Any = None
    cluster: dict[str, str] | None = None  # the target's cluster_conf(), if it has one

    def sql(self, statement: str) -> list[tuple]:
        if self._spark is not None:
            return [tuple(row) for row in self._spark.sql(statement).collect()]
        self._cursor.execute(statement)
        try:
            return [tuple(row) for row in self._cursor.fetchall()]
        except Exception:  # statements without a result set
            return []

    @property
    def spark(self) -> Any:
        """The SparkSession (local target only)."""
        if self._spark is None:
            raise RuntimeError("a SparkSession exists only for the local target")
        return self._spark

    def release_cache(self) -> None:
        """Lets go of the tables cached in this process's SparkSession, if it has one (dbt's sessions
        on a Thrift server end with their invocation, and their caches with them)."""
        if self._spark is not None:
            self._spark.catalog.clearCache()

    def files_spark(self) -> Any:
        """A SparkSession that writes the target's files: the target's own (method session), an
        application on the target's cluster (target with `spark_conf`), else a local one without
        Hive support (a Thrift server holds the metastore)."""
        if self._spark is not None:
            return self._spark
        return cluster_spark(self.cluster) if self.cluster is not None else local_spark()

    def close(self) -> None:
        if self._cursor is not None:
            self._cursor.close()


def spark_conf(target: str | None = None, cli_vars: dict[str, Any] | None = None) -> dict[str, str]:
    """Spark settings of a session-method target (paths relative to the project root)."""
    output = profile_target(target, cli_vars)
    conf = {str(k): str(v) for k, v in output.get("server_side_parameters", {}).items()}
    conf["spark.sql.ansi.enabled"] = "false"  # as dbt-spark sets it
    return conf


def cluster_home() -> Path:
    """Where scripts/cluster.py keeps the local cluster's state (CDC_CLUSTER_HOME, default .cluster)."""
    home = Path(os.environ.get("CDC_CLUSTER_HOME", ".cluster"))
    return home if home.is_absolute() else project_dir() / home


def cluster_conf(target: str = "cluster", cli_vars: dict[str, Any] | None = None) -> dict[str, str]:
    """The Spark settings every application on the target's cluster runs with (its `spark_conf`
    in profiles.yml): a relative warehouse folder made absolute (executors run elsewhere), and
    the metastore password from CDC_METASTORE_PASSWORD or the file scripts/cluster.py wrote."""
    output = profile_target(target, cli_vars)
    if "spark_conf" not in output:
        raise SystemExit(f"target {output['name']!r} has no spark_conf in profiles/profiles.yml")
    conf = {str(key): str(value) for key, value in output["spark_conf"].items()}
    warehouse = conf.get("spark.sql.warehouse.dir", "")
    if warehouse and not urlsplit(warehouse).scheme:
        path = Path(warehouse)
        conf["spark.sql.warehouse.dir"] = (path if path.is_absolute() else project_dir() / path).as_uri()
    password_key = "spark.hadoop.javax.jdo.option.ConnectionPassword"
    if not conf.get(password_key):
        password_file = cluster_home() / "metastore.password"
        if not password_file.is_file():
            raise SystemExit(
                f"no metastore password: set CDC_METASTORE_PASSWORD, or start the local cluster once "
                f"(make cluster), which writes {password_file}"
            )
        conf[password_key] = password_file.read_text().strip()
    conf["spark.sql.ansi.enabled"] = "false"  # as dbt-spark sets it
    return conf


def port_open(host: str, port: int, timeout: float = 1) -> bool:
    """Whether something listens on host:port."""
    with socket.socket() as probe:
        probe.settimeout(timeout)
        return probe.connect_ex((host, port)) == 0


def require_reachable(what: str, host: str, port: int, hint: str) -> None:
    """One clear line, before anything waits on a service that is not there."""
    if not port_open(host, port, timeout=3):
        raise SystemExit(f"{what} at {host}:{port} is unreachable: {hint}")


def cluster_spark(conf: dict[str, str], hive: bool = False) -> Any:
    """This process's application on the cluster (a SparkSession submitted to `spark.master`);
    with `hive`, it reads and writes the tables of the shared metastore itself."""
    from pyspark.sql import SparkSession

    master = conf["spark.master"]
    address = urlsplit(master)
    require_reachable(
        "the Spark master", address.hostname, address.port or 7077, "start it (make cluster) or set CDC_SPARK_MASTER"
    )
    active = SparkSession.getActiveSession()
    if active is not None:
        if active.sparkContext.master == master:
            return active
        # a process has one SparkContext: a job meant for the cluster must not run elsewhere
        raise SystemExit(
            f"this process already runs Spark on {active.sparkContext.master}: "
            f"load on the cluster ({master}) from a process of its own"
        )
    builder = SparkSession.builder.appName("cdc-load").config("spark.ui.showConsoleProgress", "false")
    if hive:
        builder = builder.enableHiveSupport()
    for key, value in conf.items():
        builder = builder.config(key, value)
    # the loader's tasks run in Python workers on the executors: this interpreter and package
    builder = builder.config("spark.pyspark.python", sys.executable)
    if address.hostname in ("127.0.0.1", "localhost"):
        # a cluster on loopback: the driver listens there too (else on the host's address)
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    if os.environ.get("PYTHONPATH"):
        builder = builder.config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def local_spark() -> Any:
    """The process's SparkSession if it has one (any session can read and write files), else a
    local one with the `local` target's settings but no Hive metastore."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.chdir(project_dir())  # profile paths are relative to the project root
    builder = SparkSession.builder.appName("cdc-load").config("spark.ui.showConsoleProgress", "false")
    for key, value in spark_conf("local").items():
        if not key.startswith("spark.hadoop.javax.jdo."):  # the metastore's, unused here
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def end_spark(spark: Any) -> int | None:
    """Stops the session and ends this process's Spark JVM (stopping the session alone leaves
    the JVM, and Derby's hold on an embedded metastore, alive), then lets other processes open
    that metastore. The JVM's exit code (None if this process had none)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    spark.stop()
    if gateway is None:
        return None
    gateway.shutdown()
    code = None
    if gateway.proc is not None:
        gateway.proc.stdin.close()  # the gateway JVM exits when its stdin closes
        code = gateway.proc.wait(timeout=120)
    SparkContext._gateway = None
    SparkContext._jvm = None
    release_embedded_metastores()
    return code


def connect(target: str | None = None, cli_vars: dict[str, Any] | None = None) -> SqlConnection:
    """A SQL connection to the target (default: the profile's) as dbt sees it; `cli_vars`: the
    --vars of the command, which profiles.yml may read with var()."""
    output = profile_target(target, cli_vars)
    schema = output["schema"]
    if output["method"] == "session":
        os.chdir(project_dir())  # profile paths are relative to the project root
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        # no default of ours: Spark checks a given default against the setting's values ('' is
        # none of them), and a session without Hive has it unset, so its own default answers
        if active is not None and active.conf.get("spark.sql.catalogImplementation") != "hive":
            active.stop()  # a session without Hive (a Thrift load's, see local_spark) cannot gain it
        # no console progress bar: the scripts log their own progress
        builder = SparkSession.builder.enableHiveSupport().appName("cdc-scripts")
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        settings = spark_conf(output["name"], cli_vars)
        for key, value in settings.items():
            builder = builder.config(key, value)
        if SparkSession.getActiveSession() is None:
            hold_embedded_metastore(settings)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        return SqlConnection(output["name"], schema, _spark=spark)
    if output["method"] == "thrift":
        from pyhive import hive

        cluster = cluster_conf(output["name"], cli_vars) if "spark_conf" in output else None
        hint = "start the local cluster (make cluster)" if cluster else "start it (scripts/thrift_server.py start)"
        require_reachable(
            f"the Spark Thrift Server of target {output['name']}", output["host"], int(output["port"]), hint
        )
        connection = hive.connect(host=output["host"], port=int(output["port"]))
        return SqlConnection(output["name"], schema, _cursor=connection.cursor(), cluster=cluster)
    raise SystemExit(f"target {output['name']!r}: method {output['method']!r} is not supported")
