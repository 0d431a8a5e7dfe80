"""The benchmark's results as a file and a picture: docs/benchmarks/<name>.json and <name>.svg.

    python -m cdc_bench.report docs/benchmarks/NAME.json     (draws NAME.svg again from the JSON)

`publish` takes the bench's report (cdc_bench.bench: steps, ratios, acceptance), adds what makes
it comparable later (the machine, the versions, the commit), writes it as JSON and draws the
chart: seconds per step against the floor and the hand-written anchors, and the latency of warm
cycles. A result of the same name written before is kept beside it, numbered (`NAME.1.json`,
oldest first): older results stay as files. The SVG is written here, with no plotting library.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from cdc_testkit import PROJECT_ROOT

RESULTS = PROJECT_ROOT / "docs" / "benchmarks"
# steps that are a yardstick, not the project's own work
ANCHORS = ("floor", "hand_written", "landed_hand_written", "landed_one_pass", "hand_merge", "anchor")
WIDTH, LABEL, ROW = 900, 200, 26
OURS, ANCHOR, LOAD, GRID, INK = "#2f6db3", "#9aa3ad", "#9cc1ea", "#c8ccd1", "#222"


def publish(report: dict[str, Any], name: str | None = None, folder: Path = RESULTS) -> tuple[Path, Path]:
    """Writes `report` with the machine, versions and commit as `folder`/NAME.json and its chart
    as NAME.svg (NAME default: target-format-events); the two paths."""
    name = name or f"{report.get('target', 'local')}-{report.get('format', 'bench')}-{report.get('events', 0)}"
    results = {**report, "machine": machine(), "versions": versions(), "commit": commit()}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    if path.exists():  # the older result stays, numbered
        number = 1
        while (older := folder / f"{name}.{number}.json").exists():
            number += 1
        path.rename(older)
    path.write_text(json.dumps(results, indent=2) + "\n")
    chart = path.with_suffix(".svg")
    chart.write_text(svg(results))
    print(f"results: {path}\nchart: {chart}")
    return path, chart


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"platform": platform.platform(), "cores": os.cpu_count()}
    try:
        cpu = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in cpu.splitlines() if line.startswith("model name"))
        memory = Path("/proc/meminfo").read_text().split()
        info["memory_gb"] = round(int(memory[memory.index("MemTotal:") + 1]) / 1024**2, 1)
    except (OSError, StopIteration, ValueError):  # not Linux: what platform says is enough
        pass
    return info


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {"python": platform.python_version()}
    for package in ("pyspark", "delta-spark", "dbt-core", "dbt-spark"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
        found["java"] = java.splitlines()[0] if java else None
    except OSError:
        found["java"] = None
    return found


def commit() -> dict[str, Any] | None:
    """The checkout measured: its commit, and whether it had uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=PROJECT_ROOT, capture_output=True, text=True)
    except OSError:
        return None
    if head.returncode:
        return None
    return {"sha": head.stdout.strip(), "uncommitted_changes": bool(status.stdout.strip())}


def _text(x: float, y: float, text: str, size: int = 12, anchor: str = "start", weight: str = "normal") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
        f'fill="{INK}">{escape(text)}</text>'
    )


def _rect(x: float, y: float, width: float, height: float, color: str) -> str:
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(width, 0.5):.1f}" height="{height:.1f}" fill="{color}"/>'


def _times(seconds: float, anchor: float | None) -> str:
    return f", {seconds / anchor:.1f}x" if anchor else ""


def svg(results: dict[str, Any]) -> str:
    """The chart: a bar per step (seconds; a full or incremental run split into load and build),
    the floor and the hand-written job as lines to read the bars against; then the warm cycles'
    latency (each cycle, or the medians and 95th percentiles the results give)."""
    # a step of many cycles (seconds_each) is drawn cycle by cycle below, not as one bar of their sum
    steps = [step for step in results["steps"] if step.get("seconds") and not _cycles(step)]
    by_name = {step["name"]: step["seconds"] for step in steps}
    floor, hand = by_name.get("floor"), by_name.get("hand_written")
    longest = max(step["seconds"] for step in steps)
    plot = WIDTH - LABEL - 320  # room for the value labels on the right
    scale = plot / longest
    events = f"{results.get('events', 0):,} events over {results.get('keys', 0):,} keys"
    out = [
        _text(
            10, 22, f"Benchmark: {results.get('format')}, {events}, target {results.get('target')}", 15, weight="bold"
        ),
        _text(10, 40, results.get("label") or _machine_line(results), 11),
        _text(10, 64, "Seconds per step (shorter is better); x: times the floor, times the hand-written job", 12),
    ]
    top = 76
    for line_at, name in ((floor, "floor"), (hand, "hand-written")):
        if line_at:
            x = LABEL + line_at * scale
            bottom = top + ROW * len(steps)
            out.append(
                f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{bottom}" stroke="{GRID}" stroke-dasharray="4 3"/>'
            )
            out.append(_text(x + 3, bottom + 12, name, 10))
    for number, step in enumerate(steps):
        y = top + number * ROW
        seconds, parts = step["seconds"], step.get("parts") or {}
        out.append(_text(LABEL - 8, y + 15, step["name"], 12, "end"))
        color = ANCHOR if step["name"] in ANCHORS else OURS
        load = parts.get("load_s") if "build_s" in parts else None
        if load:
            out.append(_rect(LABEL, y + 3, load * scale, ROW - 8, LOAD))
            out.append(_rect(LABEL + load * scale, y + 3, (seconds - load) * scale, ROW - 8, color))
        else:
            out.append(_rect(LABEL, y + 3, seconds * scale, ROW - 8, color))
        note = f"{seconds:,.1f} s"
        if step["name"] not in ("floor", "hand_written"):
            note += f"{_times(seconds, floor)} floor{_times(seconds, hand)} hand-written" if floor and hand else ""
        if load:
            note += f" (load {load:,.1f})"
        out.append(_text(LABEL + seconds * scale + 6, y + 15, note, 11))
    y = top + ROW * len(steps) + 30
    x = 10.0
    for color, meaning in ((OURS, "this project"), (ANCHOR, "anchors: what users would write instead"), (LOAD, "load")):
        out += [_rect(x, y - 9, 10, 10, color), _text(x + 14, y, meaning, 11)]
        x += 24 + 6.5 * len(meaning)
    y, latency = _latency(results, y + 30)
    out += latency
    height = y + 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">\n'
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>\n' + "\n".join(out) + "\n</svg>\n"
    )


def _machine_line(results: dict[str, Any]) -> str:
    machine, found = results.get("machine") or {}, results.get("versions") or {}
    return (
        f"{machine.get('cores', '?')} cores, {machine.get('memory_gb', '?')} GB; Spark {found.get('pyspark')}, "
        f"Delta {found.get('delta-spark')}, dbt {found.get('dbt-core')}"
    )


def _cycles(step: dict[str, Any]) -> list[float]:
    return [seconds for seconds in (step.get("parts") or {}).get("seconds_each") or [] if seconds]


def _latency(results: dict[str, Any], y: float) -> tuple[float, list[str]]:
    """The warm cycles: each cycle's seconds where a step kept them (seconds_each), else the
    summaries the results list under `latency` (label, median_s, p95_s)."""
    out: list[str] = []
    cycles = next((step for step in results["steps"] if _cycles(step)), None)
    if cycles:
        each = _cycles(cycles)
        median = statistics.median(each)
        p95 = sorted(each)[max(0, round(0.95 * len(each)) - 1)]
        out.append(
            _text(
                10,
                y,
                f"Warm cycles ({cycles['name']}): seconds of each, in order; "
                f"median {median:.1f} s, 95th percentile {p95:.1f} s",
                12,
            )
        )
        height, width = 90, (WIDTH - LABEL - 40) / len(each)
        scale = height / max(each)
        for number, seconds in enumerate(each):
            out.append(
                _rect(
                    LABEL + number * width,
                    y + 12 + height - seconds * scale,
                    max(width - 1, 0.8),
                    seconds * scale,
                    OURS,
                )
            )
        line = y + 12 + height - median * scale
        out.append(
            f'<line x1="{LABEL}" y1="{line:.1f}" x2="{WIDTH - 40}" y2="{line:.1f}" stroke="{INK}" '
            'stroke-dasharray="4 3"/>'
        )
        out.append(_text(LABEL - 8, line + 4, f"median {median:.1f} s", 11, "end"))
        return y + height + 30, out
    summaries = results.get("latency") or []
    if not summaries:
        return y, out
    out.append(_text(10, y, "Latency of warm cycles (median; 95th percentile where measured)", 12))
    longest = max(max(item["median_s"], item.get("p95_s") or 0) for item in summaries)
    scale = (WIDTH - LABEL - 330) / longest
    for number, item in enumerate(summaries):
        row = y + 10 + number * ROW
        out.append(_text(LABEL - 8, row + 15, item["label"], 12, "end"))
        if item.get("p95_s"):
            out.append(_rect(LABEL, row + 3, item["p95_s"] * scale, ROW - 8, LOAD))
        out.append(_rect(LABEL, row + 3, item["median_s"] * scale, ROW - 8, OURS))
        p95 = f", 95th percentile {item['p95_s']:.1f} s" if item.get("p95_s") else ""
        extent = max(item["median_s"], item.get("p95_s") or 0) * scale
        out.append(
            _text(LABEL + extent + 6, row + 15, f"median {item['median_s']:.1f} s{p95}{item.get('note', '')}", 11)
        )
    return y + 10 + ROW * len(summaries) + 10, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Draw a benchmark result's chart (NAME.svg) from its JSON.")
    parser.add_argument("results", type=Path, help="a docs/benchmarks/NAME.json the bench wrote")
    args = parser.parse_args(argv)
    try:
        results = json.loads(args.results.read_text())
    except (OSError, ValueError) as exc:
        parser.error(f"cannot read {args.results}: {exc}")
    chart = args.results.with_suffix(".svg")
    chart.write_text(svg(results))
    print(f"chart: {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
