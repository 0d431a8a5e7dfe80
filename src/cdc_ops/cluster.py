"""Start or stop a Spark cluster on this machine, on loopback, for target `cluster`.

    python scripts/cluster.py start    # or: make cluster
    python scripts/cluster.py status
    python scripts/cluster.py stop     # or: make cluster-stop

What it starts, from the settings of target `cluster` in profiles/profiles.yml (its `spark_conf`):
  - PostgreSQL (Debian's `postgresql`), data folder under $CDC_CLUSTER_HOME (default .cluster),
    holding the Hive metastore database; the metastore's tables are created on first start.
    The password is generated on first start into $CDC_CLUSTER_HOME/metastore.password.
  - a Spark standalone master (spark.master's host and port; web UI CDC_MASTER_WEBUI_PORT, 8080)
    and two workers (web UIs CDC_WORKER_WEBUI_PORT and the next port, 8081 and 8082)
  - the Spark Thrift Server, submitted to that master (CDC_CLUSTER_THRIFT_PORT, 10000)
The warehouse is spark.sql.warehouse.dir (default $CDC_CLUSTER_HOME/warehouse). A metastore
URL that is not on loopback is someone else's database: it is checked, not started.
Logs and process ids are in $CDC_CLUSTER_HOME; `stop` ends everything `start` started.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from cdc_dbt_spark.connection import cluster_conf, cluster_home, port_open, profile_target
from cdc_dbt_spark.settings import add_project_arguments, project_dir, use_project
from cdc_ops.thrift_server import server_command

log = logging.getLogger("cluster")
WORKERS = 2
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
APT_PACKAGES = ("postgresql", "libpostgresql-jdbc-java")


class ClusterError(Exception):
    """A one-line reason the cluster cannot start."""


def _wait(what: str, ready, timeout: float, process: subprocess.Popen | None = None, log_path: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise ClusterError(f"{what} exited (code {process.returncode}); see {log_path}")
        if ready():
            return
        time.sleep(0.5)
    raise ClusterError(f"{what} not ready within {timeout:.0f} s; see {log_path}")


def _run(command: list[str], what: str) -> None:
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode:
        lines = (completed.stderr or completed.stdout).strip().splitlines()
        raise ClusterError(f"{what} failed: {lines[-1] if lines else f'exit code {completed.returncode}'}")


class Cluster:
    def __init__(self) -> None:
        self.home = cluster_home()
        self.pids_path = self.home / "pids.json"
        import pyspark

        self.spark_home = Path(pyspark.__file__).parent
        thrift = profile_target("cluster")
        self.thrift_host, self.thrift_port = thrift["host"], int(thrift["port"])
        self.webui_port = int(os.environ.get("CDC_MASTER_WEBUI_PORT", "8080"))
        self.worker_webui_port = int(os.environ.get("CDC_WORKER_WEBUI_PORT", "8081"))
        self.worker_cores = os.environ.get("CDC_WORKER_CORES", "2")
        self.worker_memory = os.environ.get("CDC_WORKER_MEMORY", "6g")

    # --- processes started here, by name: pid of a process group of their own
    def _pids(self) -> dict[str, int]:
        return json.loads(self.pids_path.read_text()) if self.pids_path.exists() else {}

    def _record(self, name: str, pid: int) -> None:
        pids = self._pids()
        pids[name] = pid
        self.pids_path.write_text(json.dumps(pids))

    def _spawn(self, name: str, command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        log_path = self.home / f"{name}.log"
        environment = dict(
            os.environ,
            SPARK_HOME=str(self.spark_home),
            SPARK_LOCAL_DIRS=str(self.home / "local"),  # shuffle and spill files stay under home
            PYSPARK_PYTHON=sys.executable,
            SPARK_LOCAL_IP="127.0.0.1",  # every daemon and driver on loopback
            **(env or {}),
        )
        with log_path.open("w") as output:
            process = subprocess.Popen(
                command,
                cwd=project_dir(),
                stdout=output,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,  # stop() ends the whole group: executors and Python workers too
            )
        self._record(name, process.pid)
        return process

    # --- PostgreSQL
    def _pg_bin(self, name: str) -> str:
        found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
        if found:
            return str(found[-1])
        on_path = shutil.which(name)
        if on_path:
            return on_path
        raise ClusterError(f"PostgreSQL's {name} is missing: apt-get install postgresql")

    @staticmethod
    def _as_postgres(command: list[str]) -> list[str]:
        # PostgreSQL refuses to run as root
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command

    def _postgres_start(self, url: str, user: str, password: str) -> None:
        address = urlsplit(url.removeprefix("jdbc:"))
        host, port, database = address.hostname, address.port or 5432, address.path.lstrip("/")
        if host not in LOOPBACK:
            if not port_open(host, port):
                raise ClusterError(f"the Hive metastore database at {host}:{port} ({url}) is unreachable")
            log.info("metastore: %s (not started here)", url)
            return
        if port_open(host, port):
            raise ClusterError(f"something already listens on {host}:{port}, the metastore's port ({url})")
        data = self.home / "postgres"
        socket_dir = self.home / "postgres-socket"
        socket_dir.mkdir(exist_ok=True)
        first_start = not (data / "PG_VERSION").exists()
        if os.geteuid() == 0:
            shutil.chown(socket_dir, "postgres", "postgres")
        if first_start:
            data.mkdir(mode=0o700, exist_ok=True)
            password_file = self.home / "postgres-superuser.password"
            password_file.write_text(password + "\n")
            password_file.chmod(0o600)
            if os.geteuid() == 0:
                shutil.chown(data, "postgres", "postgres")
                shutil.chown(password_file, "postgres", "postgres")
            command = [self._pg_bin("initdb"), "-D", str(data), "-U", "postgres", "--auth-local=peer"]
            command += ["--auth-host=scram-sha-256", f"--pwfile={password_file}", "-E", "UTF8"]
            _run(self._as_postgres(command), "initdb")
            password_file.unlink()
        log_path = self.home / "postgres.log"
        if os.geteuid() == 0:
            log_path.touch()
            shutil.chown(log_path, "postgres", "postgres")
        options = f"-p {port} -k {socket_dir} -c listen_addresses={host}"
        command = [self._pg_bin("pg_ctl"), "-D", str(data), "-l", str(log_path), "-o", options, "-w", "start"]
        completed = subprocess.run(self._as_postgres(command), capture_output=True, text=True)
        if completed.returncode:
            raise ClusterError(f"PostgreSQL did not start on {host}:{port}; see {log_path}")
        self._record("postgres", -1)  # stopped with pg_ctl, not by signal
        if first_start:
            psql = [
                self._pg_bin("psql"),
                "-h",
                str(socket_dir),
                "-p",
                str(port),
                "-U",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
            ]
            quoted = password.replace("'", "''")
            statements = [
                f"create role \"{user}\" login password '{quoted}'",
                f'create database "{database}" owner "{user}"',
            ]
            for statement in statements:
                _run(self._as_postgres([*psql, "-c", statement]), "creating the metastore database")
        log.info("metastore: PostgreSQL on %s:%d, database %s (log %s)", host, port, database, log_path)

    def _postgres_stop(self) -> None:
        data = self.home / "postgres"
        if (data / "postmaster.pid").exists():
            command = [self._pg_bin("pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
            subprocess.run(self._as_postgres(command), capture_output=True, check=False)
            log.info("PostgreSQL stopped")

    # --- Spark
    def _master_json(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=2) as response:
            return json.load(response)

    def _alive_workers(self) -> int:
        try:
            return sum(worker["state"] == "ALIVE" for worker in self._master_json()["workers"])
        except OSError:
            return 0

    def preflight(self) -> dict[str, str]:
        """What must hold before anything starts (a failure here stops nothing); the settings."""
        self.home.mkdir(parents=True, exist_ok=True)
        if self._pids():
            raise ClusterError(f"a cluster was started from {self.home} and not stopped: run `stop` first")
        jar = self._require_installed()
        password_file = self.home / "metastore.password"
        if not os.environ.get("CDC_METASTORE_PASSWORD") and not password_file.exists():
            # generated once, kept with the data folder it was initialised with
            password_file.write_text(secrets.token_urlsafe(24) + "\n")
            password_file.chmod(0o600)
        conf = cluster_conf()
        if not Path(jar).is_file():
            raise ClusterError(f"no PostgreSQL JDBC driver at {jar}: apt-get install libpostgresql-jdbc-java")
        master = urlsplit(conf["spark.master"])
        if master.scheme != "spark" or master.hostname not in LOOPBACK:
            raise ClusterError(f"the master {conf['spark.master']} is not on this machine: nothing to start here")
        metastore = urlsplit(conf["spark.hadoop.javax.jdo.option.ConnectionURL"].removeprefix("jdbc:"))
        ports = (
            [("the metastore", metastore.hostname, metastore.port or 5432)] if metastore.hostname in LOOPBACK else []
        )
        for name, host, port in [
            *ports,
            ("the master", master.hostname, master.port),
            ("the master's web UI", "127.0.0.1", self.webui_port),
            ("the Thrift server", self.thrift_host, self.thrift_port),
        ]:
            if port_open(host, port):
                raise ClusterError(f"something already listens on {host}:{port}, {name}'s port")
        return conf

    def start(self, conf: dict[str, str], timeout: float) -> None:
        """Starts every service; on failure, main() stops what was started."""
        master = urlsplit(conf["spark.master"])
        warehouse = urlsplit(conf["spark.sql.warehouse.dir"])
        if warehouse.scheme == "file":
            Path(warehouse.path).mkdir(parents=True, exist_ok=True)
        (self.home / "local").mkdir(exist_ok=True)

        self._postgres_start(
            conf["spark.hadoop.javax.jdo.option.ConnectionURL"],
            conf["spark.hadoop.javax.jdo.option.ConnectionUserName"],
            conf["spark.hadoop.javax.jdo.option.ConnectionPassword"],
        )
        spark_class = str(self.spark_home / "bin" / "spark-class")
        process = self._spawn(
            "master",
            [
                *(spark_class, "org.apache.spark.deploy.master.Master", "--host", master.hostname),
                *("--port", str(master.port), "--webui-port", str(self.webui_port)),
            ],
        )
        _wait(
            "the Spark master",
            lambda: port_open(master.hostname, master.port),
            timeout,
            process,
            self.home / "master.log",
        )
        log.info("master: %s (web UI http://127.0.0.1:%d)", conf["spark.master"], self.webui_port)
        for number in range(1, WORKERS + 1):
            webui = self.worker_webui_port + number - 1 if self.worker_webui_port else 0
            self._spawn(
                f"worker-{number}",
                [
                    *(spark_class, "org.apache.spark.deploy.worker.Worker", "--host", master.hostname),
                    *("--cores", self.worker_cores, "--memory", self.worker_memory, "--webui-port", str(webui)),
                    *("--work-dir", str(self.home / f"worker-{number}"), conf["spark.master"]),
                ],
            )
        _wait(f"{WORKERS} workers", lambda: self._alive_workers() == WORKERS, timeout, None, self.home)
        log.info("workers: %d, %s cores and %s each", WORKERS, self.worker_cores, self.worker_memory)

        command = server_command(self.spark_home, conf, self.thrift_host, self.thrift_port)
        log_path = self.home / "thrift-server.log"
        process = self._spawn("thrift-server", command)
        _wait(
            "the Thrift server",
            lambda: port_open(self.thrift_host, self.thrift_port),
            timeout,
            process,
            log_path,
        )
        log.info(
            "Thrift server: %s:%d on %s (log %s)", self.thrift_host, self.thrift_port, conf["spark.master"], log_path
        )

    def _require_installed(self) -> str:
        """The JDBC driver's jar; installs the apt packages when root, else names them."""
        jar = profile_target("cluster")["spark_conf"]["spark.driver.extraClassPath"]
        missing = shutil.which("java") is None
        if missing:
            raise ClusterError("Java 17 is required (apt-get install openjdk-17-jre-headless)")
        have_pg = any(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
        if have_pg and Path(jar).is_file():
            return jar
        if os.geteuid() != 0:
            raise ClusterError(
                f"the cluster needs Debian's {' and '.join(APT_PACKAGES)}: "
                f"sudo apt-get install {' '.join(APT_PACKAGES)}"
            )
        log.info("installing %s", " ".join(APT_PACKAGES))
        environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=environment)
        subprocess.run(["apt-get", "install", "-y", "-qq", *APT_PACKAGES], check=True, env=environment)
        return jar

    def stop(self) -> None:
        """Ends what start() started, newest first; a process that ignores SIGTERM gets SIGKILL."""
        pids = self._pids()
        for name, pid in reversed(list(pids.items())):
            if name == "postgres":
                self._postgres_stop()
                continue
            try:
                os.killpg(pid, signal.SIGTERM)
                for _ in range(40):
                    os.killpg(pid, 0)
                    time.sleep(0.25)
                os.killpg(pid, signal.SIGKILL)
                log.warning("%s (pid %d) ignored SIGTERM: killed", name, pid)
            except ProcessLookupError:
                pass
            log.info("%s stopped", name)
        if not pids:
            self._postgres_stop()  # a start that failed before recording it
        self.pids_path.unlink(missing_ok=True)

    def status(self) -> int:
        pids = self._pids()
        if not pids:
            print(f"no cluster started from {self.home}")
            return 1
        for name, pid in pids.items():
            if name == "postgres":
                up = (self.home / "postgres" / "postmaster.pid").exists()
            else:
                try:
                    os.killpg(pid, 0)
                    up = True
                except ProcessLookupError:
                    up = False
            print(f"{name:14s} {'running' if up else 'NOT running'}")
        print(f"{'workers alive':14s} {self._alive_workers()} (http://127.0.0.1:{self.webui_port})")
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="Settings: target cluster in profiles/profiles.yml."
    )
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--timeout", type=float, default=180, help="seconds to wait for each service (default 180)")
    add_project_arguments(parser)
    args = parser.parse_args(argv)
    use_project(args.project_dir, args.profiles_dir)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        cluster = Cluster()
        if args.action == "status":
            return cluster.status()
        if args.action == "stop":
            cluster.stop()
            return 0
        conf = cluster.preflight()
        try:
            cluster.start(conf, args.timeout)
        except BaseException:
            cluster.stop()  # nothing half-started is left running
            raise
    except (ClusterError, subprocess.CalledProcessError) as exc:
        log.error("%s", exc)
        return 1
    log.info("cluster up: dbt build --profiles-dir profiles --target cluster; cdc-load --target cluster ...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
