"""One way to reach the project's Spark from Python: the same profile dbt uses.

The loader, the demo, the tests and the benchmark open SQL connections through
`connect()`, so they see exactly the warehouse and metastore that `dbt build`
sees for the chosen target (`local`: in-process Spark; `thrift`: a Spark
Thrift Server).
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import yaml


def _project_root() -> Path:
    """The dbt project: the checkout this package is installed from (`pip install -e .`), else
    the current folder or the nearest parent holding a dbt_project.yml, as dbt looks for it."""
    source = Path(__file__).resolve().parents[2]
    for candidate in (source, Path.cwd(), *Path.cwd().parents):
        if (candidate / "dbt_project.yml").is_file():
            return candidate
    raise SystemExit("no dbt_project.yml here or above: run from inside the cdc-dbt-spark project")


PROJECT_ROOT = _project_root()
# Spark runs the loader's tasks in Python workers started with PYSPARK_PYTHON, by default the
# `python3` on PATH; they need this interpreter, where the package and pyarrow are installed.
# Set before any SparkContext starts (dbt's included), since a context keeps the one it began with.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
PROFILES_PATH = PROJECT_ROOT / "profiles" / "profiles.yml"
PROFILE_NAME = "cdc"

log = logging.getLogger(__name__)


def _env_var(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise KeyError(f"environment variable {name} is not set and has no default")
    return value


def _render(value: Any) -> Any:
    """Render the `env_var()` templating dbt allows in profiles.yml."""
    if isinstance(value, dict):
        return {key: _render(item) for key, item in value.items()}
    if isinstance(value, str) and "{{" in value:
        environment = jinja2.Environment()
        environment.filters["as_number"] = int
        return environment.from_string(value).render(env_var=_env_var)
    return value


def profile_target(target: str | None = None) -> dict[str, Any]:
    """The rendered output of the project's dbt profile for `target`."""
    profile = yaml.safe_load(PROFILES_PATH.read_text())[PROFILE_NAME]
    name = target or _render(profile["target"])
    if name not in profile["outputs"]:
        known = ", ".join(sorted(profile["outputs"]))
        raise SystemExit(f"unknown target {name!r} (profiles.yml has: {known})")
    output = _render(profile["outputs"][name])
    output["name"] = name
    return output


@dataclass
class SqlConnection:
    """A minimal SQL runner over either a SparkSession or a PyHive cursor."""

    target: str
    schema: str
    _spark: Any = None
    _cursor: Any = None

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

    def files_spark(self) -> Any:
        """A SparkSession that writes the target's files: the target's own (method session),
        else a local one without Hive support (a Thrift server holds the metastore)."""
        return self._spark if self._spark is not None else local_spark()

    def close(self) -> None:
        if self._cursor is not None:
            self._cursor.close()


def spark_conf(target: str | None = None) -> dict[str, str]:
    """Spark settings of a session-method target (paths relative to the project root)."""
    output = profile_target(target)
    conf = {str(k): str(v) for k, v in output.get("server_side_parameters", {}).items()}
    conf["spark.sql.ansi.enabled"] = "false"  # as dbt-spark sets it
    return conf


def local_spark() -> Any:
    """The process's SparkSession if it has one (any session can read and write files), else a
    local one with the `local` target's settings but no Hive metastore."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.chdir(PROJECT_ROOT)  # profile paths are relative to the project root
    builder = SparkSession.builder.appName("cdc-load").config("spark.ui.showConsoleProgress", "false")
    for key, value in spark_conf("local").items():
        if not key.startswith("spark.hadoop.javax.jdo."):  # the metastore's, unused here
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def connect(target: str | None = None) -> SqlConnection:
    output = profile_target(target)
    schema = output["schema"]
    if output["method"] == "session":
        os.chdir(PROJECT_ROOT)  # profile paths are relative to the project root
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None and active.conf.get("spark.sql.catalogImplementation", "") != "hive":
            active.stop()  # a session without Hive (a Thrift load's, see local_spark) cannot gain it
        # no console progress bar: the scripts log their own progress
        builder = SparkSession.builder.enableHiveSupport().appName("cdc-scripts")
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        for key, value in spark_conf(output["name"]).items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        return SqlConnection(output["name"], schema, _spark=spark)
    if output["method"] == "thrift":
        from pyhive import hive

        connection = hive.connect(host=output["host"], port=int(output["port"]))
        return SqlConnection(output["name"], schema, _cursor=connection.cursor())
    raise SystemExit(f"target {output['name']!r}: method {output['method']!r} is not supported")
