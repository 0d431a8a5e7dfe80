"""Start or stop a Spark Thrift Server from the PySpark wheel, on loopback.

    python scripts/thrift_server.py start   # then: dbt build --profiles-dir profiles --target thrift
    python scripts/thrift_server.py stop

The server uses the warehouse and metastore of the `local` target (so both targets see
the same tables; only one of them can hold the Derby metastore at a time) and listens on
CDC_THRIFT_HOST:CDC_THRIFT_PORT (default 127.0.0.1:10000).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cdc_dbt_spark.connection import port_open, profile_target, spark_conf
from cdc_dbt_spark.settings import add_project_arguments, project_dir, use_project

log = logging.getLogger("thrift_server")
SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


def _state_dir() -> Path:
    home = Path(os.environ.get("CDC_SPARK_HOME", ".spark"))
    path = home if home.is_absolute() else project_dir() / home
    path.mkdir(parents=True, exist_ok=True)
    return path


# spark-submit's own options for the settings a driver must have before its JVM starts
DRIVER_OPTIONS = {
    "spark.driver.memory": "--driver-memory",
    "spark.driver.extraJavaOptions": "--driver-java-options",
    "spark.driver.extraClassPath": "--driver-class-path",
}


def server_command(spark_home: Path, conf: dict[str, str], host: str, port: int) -> list[str]:
    """spark-submit of the Thrift server with Spark settings `conf`, listening on host:port."""
    command = [str(spark_home / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--name", "cdc-thrift-server"]
    for key, value in conf.items():
        command += [DRIVER_OPTIONS[key], value] if key in DRIVER_OPTIONS else ["--conf", f"{key}={value}"]
    return [
        *command,
        *("spark-internal", "--hiveconf", f"hive.server2.thrift.bind.host={host}"),
        *("--hiveconf", f"hive.server2.thrift.port={port}"),
    ]


def start(timeout: float = 180) -> int:
    import pyspark

    thrift = profile_target("thrift")
    host, port = thrift["host"], int(thrift["port"])
    if port_open(host, port):
        log.error("something already listens on %s:%d", host, port)
        return 1
    command = server_command(Path(pyspark.__file__).parent, spark_conf("local"), host, port)
    state = _state_dir()
    log_path = state / "thrift-server.log"
    environment = dict(os.environ, SPARK_HOME=str(Path(pyspark.__file__).parent))
    with log_path.open("w") as output:
        process = subprocess.Popen(
            command,
            cwd=project_dir(),
            stdout=output,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,
        )
    (state / "thrift-server.pid").write_text(str(process.pid))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.error("the Thrift server exited (code %s); see %s", process.returncode, log_path)
            return 1
        if port_open(host, port):
            log.info("Thrift server up on %s:%d (pid %d, log %s)", host, port, process.pid, log_path)
            return 0
        time.sleep(1)
    log.error("the Thrift server did not open %s:%d within %.0f s; see %s", host, port, timeout, log_path)
    stop()
    return 1


def stop() -> int:
    pid_file = _state_dir() / "thrift-server.pid"
    if not pid_file.exists():
        log.info("no Thrift server started from here")
        return 0
    pid = int(pid_file.read_text())
    try:
        os.killpg(pid, signal.SIGTERM)
        for _ in range(60):
            os.killpg(pid, 0)
            time.sleep(0.5)
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pid_file.unlink(missing_ok=True)
    log.info("Thrift server stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Start or stop a local Spark Thrift Server for target thrift.")
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--timeout", type=float, default=180, help="seconds to wait for the server to listen")
    add_project_arguments(parser)
    args = parser.parse_args(argv)
    use_project(args.project_dir, args.profiles_dir)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return start(args.timeout) if args.action == "start" else stop()


if __name__ == "__main__":
    sys.exit(main())
