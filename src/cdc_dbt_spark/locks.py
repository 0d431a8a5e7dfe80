"""One load at a time: loaders started together on the same files must land each message once.

A load checks which files were landed before, then appends its batches. Delta Lake commits each
batch atomically, but two loads doing that side by side would both land a new file: appends are
blind (Delta never fails one append for another, docs.delta.io/concurrency-control), so nothing
in the table format stops the second copy, and the landing table has no key to MERGE on that is
cheaper than the file hashes the load already checks. So a load holds the landing table's lock
from its check until its last batch is committed; another load waits for it, logging whom it
waits for, and then finds the files landed.

- `LandingLock`: a lock file in the landing table's folder, so it holds for every process that
  writes the table, on any machine. It is created atomically (O_EXCL on a local folder; a
  create that refuses to overwrite, through Hadoop's FileSystem, elsewhere), and it is a lease:
  its holder touches it every few seconds, and a lock whose holder died (a process gone on
  this host, or a lock not touched for `LEASE_SECONDS`) is taken over, so a killed load never
  blocks the next one.
- `hold_embedded_metastore`: the embedded target's Derby metastore admits one process; a
  second loader waits for the first instead of failing with Derby's error. A metastore whose
  creation a killed process left unfinished is removed and made again.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import shutil
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

log = logging.getLogger("cdc_load")

LOCK_FILE = "_cdc_load.lock"  # names starting with _ are not data to Spark's readers
LEASE_SECONDS = 60.0
WAIT_LOG_SECONDS = 10.0


class LandingLock:
    def __init__(self, files: Any, poll: float = 0.5) -> None:
        """`files`: the landing table's `TableFiles`."""
        self.files = files
        self.path = files.join(LOCK_FILE)
        self.local = self.path.startswith("file:") or self.path.startswith("/")
        self.poll = poll
        self.owner = {"host": socket.gethostname(), "pid": os.getpid(), "token": uuid.uuid4().hex}
        self._stop = threading.Event()

    def __enter__(self) -> LandingLock:
        waited_since = time.monotonic()
        logged = waited_since
        while not self._try_acquire():
            holder = self._read()
            if self._is_stale(holder):
                log.warning("taking over the landing lock of a load that died: %s", holder)
                self._remove()
                continue
            if time.monotonic() - logged >= WAIT_LOG_SECONDS:
                log.info(
                    "waiting for the load holding %s: %s (%.0f s)", self.path, holder, time.monotonic() - waited_since
                )
                logged = time.monotonic()
            time.sleep(self.poll)
        threading.Thread(target=self._renew, name="cdc-load-lease", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if (self._read() or {}).get("token") == self.owner["token"]:
            self._remove()

    def _local_path(self) -> str:
        return re.sub(r"^file:(//)?", "", self.path)

    def _try_acquire(self) -> bool:
        text = json.dumps({**self.owner, "since": time.time()})
        if self.local:
            try:
                descriptor = os.open(self._local_path(), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(descriptor, "w") as handle:
                handle.write(text)
        else:
            jvm_path = self.files._path(self.path)
            try:
                stream = self.files.fs.create(jvm_path, False)
            except Exception:  # FileAlreadyExistsException through py4j
                return False
            stream.write(bytearray(text.encode()))
            stream.close()
        # two loads taking over one dead lock at once: only the one whose token is there holds it
        time.sleep(0.2)
        return (self._read() or {}).get("token") == self.owner["token"]

    def _read(self) -> dict | None:
        try:
            if self.local:
                return json.loads(Path(self._local_path()).read_text()) | {
                    "touched": os.path.getmtime(self._local_path())
                }
            status = self.files.fs.getFileStatus(self.files._path(self.path))
            stream = self.files.fs.open(self.files._path(self.path))
            data = bytearray(status.getLen())
            stream.readFully(data)
            stream.close()
            return json.loads(bytes(data)) | {"touched": status.getModificationTime() / 1000}
        except Exception:  # gone, or being written: read again at the next poll
            return None

    def _is_stale(self, holder: dict | None) -> bool:
        if holder is None:
            return False
        if holder.get("host") == socket.gethostname() and not _process_alive(int(holder.get("pid", 0))):
            return True
        return time.time() - holder["touched"] > LEASE_SECONDS

    def _touch(self) -> None:
        now = time.time()
        if self.local:
            os.utime(self._local_path(), (now, now))
        else:
            self.files.fs.setTimes(self.files._path(self.path), int(now * 1000), -1)

    def _remove(self) -> None:
        if self.local:
            Path(self._local_path()).unlink(missing_ok=True)
        else:
            self.files.delete(self.path)

    def _renew(self) -> None:
        while not self._stop.wait(LEASE_SECONDS / 6):
            try:
                self._touch()
            except Exception:  # the next renewal tries again; the lease outlives a few misses
                log.debug("could not renew the landing lock", exc_info=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return pid > 0


_held: dict[Path, Any] = {}  # lock file -> its open handle, until the JVM ends (or the process)


def embedded_metastore_lock(spark_conf: dict[str, str]) -> Path | None:
    """The lock file of the embedded Derby metastore of `spark_conf` (None without one)."""
    url = spark_conf.get("spark.hadoop.javax.jdo.option.ConnectionURL", "")
    match = re.search(r"jdbc:derby:;databaseName=([^;]+)", url)
    return None if match is None else Path(f"{Path(match.group(1)).resolve()}.cdc-lock")


def hold_embedded_metastore(spark_conf: dict[str, str]) -> None:
    """Waits until no other process of ours has the embedded Derby metastore of `spark_conf`
    open, then holds it while this process's Spark JVM lives (its SparkSession keeps Derby
    open): for the rest of the process, or until release_embedded_metastores. Nothing to do for
    a target without an embedded metastore."""
    lock = embedded_metastore_lock(spark_conf)
    if lock is None or lock in _held:
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock, "w")  # noqa: SIM115 - held open until released
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log.info(
            "waiting: another process has the embedded metastore %s open (one process at a time)", lock.with_suffix("")
        )
        fcntl.flock(handle, fcntl.LOCK_EX)
    _held[lock] = handle
    remove_unfinished_database(lock.with_suffix(""))


def remove_unfinished_database(folder: Path) -> None:
    """Removes an embedded Derby database whose creation a killed process did not finish: Derby
    writes `service.properties` once a new database is made, and refuses to create one over a
    folder without it ("Directory ... already exists"), so every later process would fail. Such
    a folder holds nothing yet. Left alone while a JVM has it open (Derby locks `dbex.lck`)."""
    if not folder.is_dir() or (folder / "service.properties").exists():
        return
    booted = folder / "dbex.lck"
    if booted.exists():
        with open(booted, "r+b") as handle:
            try:  # Derby's lock is the JVM's FileChannel lock: an fcntl lock, as lockf takes
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return
    log.warning("removing %s: a process was killed while creating it (it holds nothing yet)", folder)
    shutil.rmtree(folder)


def release_embedded_metastores() -> None:
    """Lets other processes open the embedded metastores this process held: for a process that
    ended its Spark JVM (stopping the session alone leaves Derby open) and goes on without it."""
    while _held:
        _, handle = _held.popitem()
        handle.close()  # closing the file drops its lock
