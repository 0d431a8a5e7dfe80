"""Warm `cdc-run` cycles timed from outside: the runner as its own process over a warehouse, messages delivered
one increment at a time once it idles, and per increment the seconds until the runner logs them visible in
cdc_current (the first step of its build, see `cdc_dbt_spark.runner`) and until its cycle's whole build is done.
`cdc_bench.kafka_landing` delivers by producing to a topic, `cdc_bench.profile_builds --runner` by moving files
into the runner's folder."""

from __future__ import annotations

import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cdc_testkit import PROJECT_ROOT

_VISIBLE = re.compile(r"cycle \d+: (\d+) messages landed, visible in cdc_current")
_BUILT = re.compile(r"cycle \d+: \d+ messages landed .*, built,")
_IDLE = re.compile(r"cycle \d+: 0 messages landed, nothing to build")
_COMPACTED = re.compile(r"cycle \d+: cdc_history compacted in ([0-9.]+) s")


@dataclass
class TimedCycle:
    visible: float  # seconds from the delivery to the runner's line that its messages are visible
    built: float  # the same, to the end of the build of the cycle that made them visible
    compacted: float | None = None  # seconds the runner then took to compact cdc_history, if it did


def timed_cycles(
    runner_arguments: Sequence[str],
    deliveries: Sequence[Callable[[], int]],
    log_path: Path,
    environment: dict[str, str],
    progress: Callable[[int, TimedCycle], None] | None = None,
) -> list[TimedCycle]:
    """Starts `cdc-run` with `runner_arguments` (its sources and --every, and dbt's options after `--`), waits
    until it idles, then calls each delivery in turn (each returns the messages it delivered), the next once the
    cycle that made the last one visible has built; `progress` is told of each cycle as it is timed. The
    runner's output goes to `log_path`; it is stopped (SIGTERM) at the end."""
    command = [sys.executable, "-m", "cdc_dbt_spark.runner", *runner_arguments]
    runner = subprocess.Popen(
        command,
        env={**environment, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=PROJECT_ROOT,
    )
    cycles: list[TimedCycle] = []
    with log_path.open("w") as output:

        def take(line: str) -> None:
            """Logs the runner's line; a compaction belongs to the last cycle timed (it follows its build)."""
            output.write(line)
            if (compacted := _COMPACTED.search(line)) and cycles:
                cycles[-1].compacted = float(compacted.group(1))

        def until(pattern: re.Pattern) -> re.Match:
            for line in runner.stdout:
                take(line)
                if found := pattern.search(line):
                    return found
            raise RuntimeError(f"the runner ended; see {log_path}")

        try:
            until(_IDLE)
            for deliver in deliveries:
                started = time.perf_counter()
                delivered = deliver()
                visible = 0  # a cycle may have started while they were delivered: it takes only some
                while visible < delivered:
                    visible += int(until(_VISIBLE).group(1))
                seen = time.perf_counter() - started
                until(_BUILT)  # the rest of the cycle's build
                cycles.append(TimedCycle(seen, time.perf_counter() - started))
                if progress:
                    progress(len(cycles), cycles[-1])
            return cycles
        finally:
            runner.send_signal(signal.SIGTERM)
            for line in runner.stdout:
                take(line)
            runner.wait()


def percentile_95(values: Sequence[float]) -> float:
    """The 95th percentile of `values` (statistics.quantiles' default method), or the value if there is one."""
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]
