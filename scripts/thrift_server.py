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
import socket
import subprocess
import sys
import time
from pathlib import Path

from cdc_dbt_spark.connection import PROJECT_ROOT, profile_target, spark_conf

log = logging.getLogger("thrift_server")
SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


def _state_dir() -> Path:
    home = Path(os.environ.get("CDC_SPARK_HOME", ".spark"))
    path = home if home.is_absolute() else PROJECT_ROOT / home
    path.mkdir(parents=True, exist_ok=True)
    return path


def _port_open(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


def start(timeout: float = 180) -> int:
    import pyspark

    thrift = profile_target("thrift")
    host, port = thrift["host"], int(thrift["port"])
    if _port_open(host, port):
        log.error("something already listens on %s:%d", host, port)
        return 1
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    command = [str(spark_submit), "--class", SERVER_CLASS, "--name", "cdc-thrift-server"]
    for key, value in spark_conf("local").items():
        if key == "spark.driver.memory":
            command += ["--driver-memory", value]
        elif key == "spark.driver.extraJavaOptions":
            command += ["--driver-java-options", value]
        else:
            command += ["--conf", f"{key}={value}"]
    command += [
        "spark-internal",
        "--hiveconf",
        f"hive.server2.thrift.bind.host={host}",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
    ]
    state = _state_dir()
    log_path = state / "thrift-server.log"
    environment = dict(os.environ, SPARK_HOME=str(Path(pyspark.__file__).parent))
    with log_path.open("w") as output:
        process = subprocess.Popen(
            command,
            cwd=PROJECT_ROOT,
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
        if _port_open(host, port):
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
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return start(args.timeout) if args.action == "start" else stop()


if __name__ == "__main__":
    sys.exit(main())
