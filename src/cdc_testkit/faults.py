"""Test kit: dbt and the loader as processes of their own, so that they can be killed.

Used by tests/python/test_faults.py and the soak (cdc_testkit.soak). Every function takes the environment
the process runs with (CDC_SPARK_HOME, CDC_SCHEMA, DBT_TARGET_PATH, ...): one embedded Spark
home is opened by one process at a time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from cdc_testkit import PROJECT_ROOT, TEST_JAVA_OPTIONS

DBT = str(Path(sys.executable).parent / "dbt")
BUILD = (DBT, "build", "--profiles-dir", "profiles", "--exclude-resource-type", "unit_test")
LOADER = (sys.executable, str(PROJECT_ROOT / "scripts" / "load_raw.py"))
# prints one JSON line per query given as an argument: [query, [row as JSON, ...]]
QUERY = """
import json, sys
from cdc_dbt_spark.connection import connect
connection = connect()
for query in sys.argv[1:]:
    rows = connection.sql(f"select to_json(struct(*)) from ({query.format(schema=connection.schema)})")
    print(json.dumps([query, [row[0] for row in rows]]))
"""


def project_environment(home: Path, schema: str) -> dict[str, str]:
    """The environment of processes that share one embedded project: its Spark home (warehouse
    and metastore), schema, dbt target and logs under `home`; the kit's JVM options unless set."""
    return dict(
        os.environ,
        CDC_DRIVER_JAVA_OPTIONS=os.environ.get("CDC_DRIVER_JAVA_OPTIONS", TEST_JAVA_OPTIONS),
        CDC_SPARK_HOME=str(home / "spark"),
        CDC_SCHEMA=schema,
        CDC_TARGET="local",
        DBT_TARGET_PATH=str(home / "target"),
        DBT_LOG_PATH=str(home / "logs"),
    )


def run(environment: dict[str, str], *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, env=environment, capture_output=True, text=True, cwd=PROJECT_ROOT)


def query(environment: dict[str, str], *queries: str) -> dict[str, list[dict]]:
    """Runs each query (`{schema}` stands for CDC_SCHEMA) in a process of its own: query -> rows."""
    finished = run(environment, sys.executable, "-c", QUERY, *queries)
    if finished.returncode != 0:
        raise RuntimeError(finished.stderr[-3000:])
    answers = dict(json.loads(line) for line in finished.stdout.splitlines() if line.startswith("["))
    return {text: [json.loads(row) for row in rows] for text, rows in answers.items()}


def incremental_models(target_path: Path) -> list[str]:
    """The project's incremental models in the order the last build ran them (its run_results)."""
    manifest = json.loads((target_path / "manifest.json").read_text())
    incremental = {
        node["name"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["config"]["materialized"] == "incremental"
    }
    results = json.loads((target_path / "run_results.json").read_text())["results"]
    return [name for name in (result["unique_id"].split(".")[-1] for result in results) if name in incremental]


def kill_inside(environment: dict[str, str], model: str, after_seconds: float, *dbt_args: str) -> list[str]:
    """Starts `dbt run` (with `dbt_args`) and SIGKILLs it, dbt and its Spark, `after_seconds`
    after `model` started. Its output; raises if dbt was not killed (it finished or failed first)."""
    started = re.compile(rf"START sql incremental model {re.escape(environment['CDC_SCHEMA'])}\.{model} ")
    process = subprocess.Popen(
        [DBT, "run", "--profiles-dir", "profiles", *dbt_args],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=PROJECT_ROOT,
        start_new_session=True,  # its own process group: dbt and the Spark JVM it starts
    )
    output = []
    for line in process.stdout:
        output.append(line)
        if started.search(line):
            time.sleep(after_seconds)
            os.killpg(process.pid, signal.SIGKILL)
            break
    output += process.stdout.readlines()
    process.wait()
    if process.returncode != -signal.SIGKILL:
        raise RuntimeError(f"dbt was not killed inside {model}:\n{''.join(output)[-3000:]}")
    return output


def finished_models(output: list[str], schema: str) -> set[str]:
    """The models dbt's output says were written."""
    done = re.compile(rf"OK created sql \w+ model {re.escape(schema)}\.(\w+) ")
    return {match.group(1) for match in map(done.search, output) if match}


def kill_loader(environment: dict[str, str], arguments: list[str], after_commits: int) -> bool:
    """Starts the loader and SIGKILLs it, with its Spark, once it has committed `after_commits`
    landing batches; whether it was killed (it may finish first)."""
    process = subprocess.Popen(
        [*LOADER, *arguments],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=PROJECT_ROOT,
        start_new_session=True,
    )
    committed = 0
    for line in process.stderr:
        committed += " committed: " in line
        if committed == after_commits:
            os.killpg(process.pid, signal.SIGKILL)
            break
    process.stderr.read()
    process.wait()
    return process.returncode == -signal.SIGKILL


def land_together(environment: dict[str, str], arguments: list[str], loaders: int = 2) -> list[tuple[int, str]]:
    """Starts `loaders` loaders with the same arguments at the same moment: (exit code, log) of each."""
    started = [
        subprocess.Popen([*LOADER, *arguments], env=environment, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
        for _ in range(loaders)
    ]
    return [(loader.wait(), log) for loader, log in ((loader, loader.communicate()[1]) for loader in started)]
