"""docs/cli.md, the command-line reference, generated from the commands' own argparse definitions.

    python -m cdc_ops.cli_reference            (writes docs/cli.md)
    python -m cdc_ops.cli_reference --check    (exit code 1 if docs/cli.md is not what it would write)

Each command's `--help`, as the command prints it in this project (the --format names are the
project's), at a fixed width: the reference cannot drift from the code, and tests/python/test_docs.py
checks that it has not.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
from unittest import mock

from cdc_dbt_spark.settings import find_project_dir

# (the command as a user types it, the module whose main() it runs, what it is for)
COMMANDS = (
    ("cdc-load", "cdc_dbt_spark.loader", "land files or Kafka topics (also: python scripts/load_raw.py)"),
    ("cdc-run", "cdc_dbt_spark.runner", "land and build in one process, once or every few seconds"),
    ("python scripts/demo.py", "cdc_ops.demo", "the demo (make demo)"),
    ("python scripts/scaffold_typed_table.py", "cdc_ops.scaffold_typed_table", "add typed tables for one source table"),
    ("python scripts/thrift_server.py", "cdc_ops.thrift_server", "a local Spark Thrift Server (target thrift)"),
    ("python scripts/cluster.py", "cdc_ops.cluster", "a local Spark standalone cluster (target cluster)"),
    ("python scripts/bench.py", "cdc_bench.bench", "the benchmark"),
    ("python scripts/bench_kafka.py", "cdc_bench.kafka_landing", "the Kafka landing benchmark"),
    ("python scripts/profile_model.py", "cdc_bench.profile_model", "where one model's time goes"),
    ("python scripts/profile_builds.py", "cdc_bench.profile_builds", "small builds node by node, settings alternated"),
    ("python scripts/soak.py", "cdc_testkit.soak", "random streams with faults, checked against a replay"),
    ("python scripts/soak_kafka.py", "cdc_testkit.kafka_soak", "a runner on Kafka killed at random points"),
    ("python -m cdc_bench.report", "cdc_bench.report", "redraw a benchmark chart from its JSON"),
    ("python -m cdc_ops.cli_reference", "cdc_ops.cli_reference", "this reference"),
)
WIDTH = "100"  # argparse wraps the help to $COLUMNS


def command_help(command: str, module: str) -> str:
    """What `command --help` prints, at WIDTH columns."""
    prog = command.split()[-1].rsplit("/", 1)[-1]
    out = io.StringIO()
    with (
        mock.patch.dict(os.environ, {"COLUMNS": WIDTH}),
        mock.patch.object(sys, "argv", [prog]),
        contextlib.redirect_stdout(out),
        contextlib.suppress(SystemExit),
    ):
        importlib.import_module(module).main(["--help"])
    return out.getvalue().rstrip() + "\n"


def reference() -> str:
    """The text of docs/cli.md."""
    lines = [
        "# Command-line reference",
        "",
        "Generated from the commands' own definitions by `python -m cdc_ops.cli_reference`: do not edit by hand.",
        "Each command finds the dbt project as dbt does: `--project-dir`, else `DBT_PROJECT_DIR`, else the",
        "current folder or the nearest parent holding `dbt_project.yml`.",
        "",
        *(f"- [`{command}`](#{_anchor(command)}): {purpose}" for command, _, purpose in COMMANDS),
        "",
    ]
    for command, module, _ in COMMANDS:
        lines += [f"## {command}", "", "```text", command_help(command, module).rstrip(), "```", ""]
    return "\n".join(lines)


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but - and _ dropped, spaces as -."""
    kept = "".join(char for char in heading.lower() if char.isalnum() or char in " -_")
    return kept.replace(" ", "-")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write docs/cli.md from the commands' argparse definitions.")
    parser.add_argument("--check", action="store_true", help="only compare: exit code 1 if docs/cli.md differs")
    args = parser.parse_args(argv)
    path = find_project_dir() / "docs" / "cli.md"
    text = reference()
    if args.check:
        current = path.read_text() if path.exists() else ""
        if current != text:
            print(f"{path} is out of date: run python -m cdc_ops.cli_reference", file=sys.stderr)
            return 1
        return 0
    path.write_text(text)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
