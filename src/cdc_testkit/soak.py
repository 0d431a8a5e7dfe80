"""Soak: many random streams per format, in any arrival order, split into loads at random, with
duplicates, with builds and loads killed at random points, checked against the Python replay.

    python scripts/soak.py                      # 50 streams per format, one round
    python scripts/soak.py --streams 100 --rounds 3 --formats canal_json,dts_avro

Not part of the test command: a round of 50 streams of every format takes a few minutes. A
round lands every stream of every format into one project (its own Spark home and schema under
--work-dir), in --loads loads: each stream is written shuffled, with a random share of
duplicates, into a random number of files, each file landed in a random load. After each load
comes a build; with --kill-share probability, a `dbt run` killed inside a random incremental
model and a load killed part-way come first. At the end every stream's current rows and
version counts are compared with `expected_state`, the replay in Python. Prints per format:
streams, messages landed, streams that differ from the replay (must be 0) and runs that failed
(must be 0; a run that was killed on purpose is not a failure). Exit code 1 if any is not 0.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from cdc_dbt_spark.settings import project_formats, project_vars, use_project
from cdc_testkit import PROJECT_ROOT
from cdc_testkit.encoders import CANNOT_TRUNCATE, ENCODERS
from cdc_testkit.faults import (
    BUILD,
    LOADER,
    incremental_models,
    kill_inside,
    kill_loader,
    project_environment,
    query,
    run,
)
from cdc_testkit.oracle import expected_state
from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import write_stream


def streams_of_round(formats: list[str], streams: int, loads: int, rng: random.Random, folder: Path):
    """(oracle per database, files per (format, load)): each stream in a database of its own."""
    oracle: dict[str, tuple[dict, dict]] = {}
    files: dict[tuple[str, int], list[Path]] = {}
    for source_format in formats:
        for number in range(streams):
            seed = rng.randrange(1 << 30)
            scenario = Scenario(
                seed=seed,
                tables=rng.randint(1, 3),
                keys=rng.randint(3, 30),
                events=rng.randint(20, 150),
                truncate_every=0 if source_format in CANNOT_TRUNCATE else rng.choice([0, 37, 71]),
                ddl_every=rng.choice([0, 29, 61]),
                equal_time_share=rng.choice([0.0, 0.2, 0.6]),
                key_change_share=rng.choice([0.02, 0.2]),
            )
            database = f"{source_format}_{number}"
            changes = [replace(change, database=database) for change in scenario.generate()]
            oracle[database] = expected_state(changes)
            written = write_stream(
                changes,
                source_format,
                folder / source_format / str(number),
                files=rng.randint(1, loads),
                seed=seed,
                duplicate_share=rng.choice([0.0, 0.1, 0.3]),
                shuffle=True,
            )
            for path in written:
                files.setdefault((source_format, rng.randrange(loads)), []).append(path)
    return oracle, files


# formats whose messages name no key: the invariant test's tables have theirs in the test seed
# (seeds/testing/cdc_test_table_keys.csv); the soak's, as typed-table key overrides (var cdc_typed_tables) of the run
KEYLESS_FORMATS = ("datahub_tuple", "shareplex_json")


def key_vars(oracle: dict[str, tuple[dict, dict]]) -> str:
    """--vars declaring `id` the key of every table of the keyless formats' streams, beside the
    project's own typed tables."""
    typed = dict(project_vars().get("cdc_typed_tables") or {})
    for database in oracle:
        if database.rsplit("_", 1)[0] in KEYLESS_FORMATS:
            for table in {table_id for table_id, _ in oracle[database][1]}:
                typed[f"soak_{table}".replace(".", "_")] = {"table_id": table, "key_columns": ["id"]}
    return json.dumps({"cdc_typed_tables": typed})


def differences(oracle: dict[str, tuple[dict, dict]], current: list[dict], versions: list[dict]) -> set[str]:
    """The databases whose current rows or version counts differ from the replay."""

    def by_database(rows: list[dict], value: str) -> dict[str, dict]:
        grouped: dict[str, dict] = {database: {} for database in oracle}
        for row in rows:
            database, table = row["table_id"].split(".")[-2:]
            key = tuple(json.loads(row["key_json"]).values())
            grouped.setdefault(database, {})[(f"{database}.{table}", key)] = row[value]
        return grouped

    got_current = by_database(current, "row_image")
    got_versions = by_database(versions, "versions")
    differing = set()
    for database, (want_current, want_versions) in oracle.items():
        rows = got_current[database]
        same_rows = set(rows) == set(want_current) and all(
            (rows[key].get("name"), rows[key].get("region")) == (want_current[key]["name"], want_current[key]["region"])
            for key in want_current
        )
        if not same_rows or got_versions[database] != want_versions:
            differing.add(database)
    return differing


def soak_round(formats: list[str], args: argparse.Namespace, number: int, rng: random.Random) -> dict:
    folder = args.work_dir / f"round-{number}"
    shutil.rmtree(folder, ignore_errors=True)
    oracle, files = streams_of_round(formats, args.streams, args.loads, rng, folder / "in")
    environment = project_environment(folder, "soak")
    dbt_vars = key_vars(oracle)
    failures: Counter[str] = Counter()  # per format; builds count for every format
    kills = 0
    models: list[str] = []
    for load in range(args.loads):
        for source_format in formats:
            paths = [str(path) for path in files.get((source_format, load), [])]
            if not paths:
                continue
            arguments = ["--format", source_format, "--max-batch-messages", "500", *paths]
            if rng.random() < args.kill_share and kill_loader(environment, arguments, rng.randint(1, 3)):
                kills += 1
            if run(environment, *LOADER, *arguments).returncode != 0:
                failures[source_format] += 1
        if models and rng.random() < args.kill_share:
            kill_inside(environment, rng.choice(models), rng.uniform(0, 1), "--vars", dbt_vars)
            kills += 1
        if run(environment, *BUILD, "--vars", dbt_vars).returncode != 0:
            failures.update(formats)
        models = models or incremental_models(folder / "target")
        print(f"round {number}: load {load + 1} of {args.loads} landed and built ({kills} kills so far)", flush=True)

    answers = query(
        environment,
        "select table_id, key_json, row_image from {schema}.cdc_current",
        "select table_id, key_json, count(*) as versions from {schema}.cdc_history group by 1, 2",
        "select source_format, count(*) as messages from {schema}.raw_cdc_messages group by 1",
    )
    current, versions, landed = answers.values()
    differing = differences(oracle, current, versions)
    messages = {row["source_format"]: row["messages"] for row in landed}
    return {
        source_format: {
            "streams": args.streams,
            "messages": messages.get(source_format, 0),
            "differences": sum(database.rsplit("_", 1)[0] == source_format for database in differing),
            "runs_failed": failures[source_format],
        }
        for source_format in formats
    } | {"_kills": kills}


def main(argv: list[str] | None = None) -> int:
    use_project(PROJECT_ROOT)  # the checkout this tool measures
    known = [name for name in ENCODERS if name in project_formats()]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=50, help="random streams per format and round (default 50)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds, each a project of its own (default 1)")
    parser.add_argument("--loads", type=int, default=4, help="loads per round, each followed by a build (default 4)")
    parser.add_argument("--kill-share", type=float, default=0.5, help="chance of a killed load and a killed build")
    parser.add_argument("--formats", default=",".join(known), help="comma-separated formats (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work-dir", type=Path, default=PROJECT_ROOT / "artifacts" / "soak")
    args = parser.parse_args(argv)
    formats = args.formats.split(",")
    unknown = sorted(set(formats) - set(known))
    if unknown:
        parser.error(f"--formats: unknown {', '.join(unknown)}; known: {', '.join(known)}")
    rng = random.Random(args.seed)
    totals: dict[str, Counter] = {source_format: Counter() for source_format in formats}
    kills = 0
    started = time.monotonic()
    for number in range(args.rounds):
        result = soak_round(formats, args, number, rng)
        kills += result.pop("_kills")
        for source_format, counts in result.items():
            totals[source_format].update(counts)
    print(f"\n{'format':18s} {'streams':>8s} {'messages':>9s} {'differences':>12s} {'runs failed':>12s}")
    for source_format, counts in totals.items():
        print(
            f"{source_format:18s} {counts['streams']:8d} {counts['messages']:9d} "
            f"{counts['differences']:12d} {counts['runs_failed']:12d}"
        )
    print(f"\n{args.rounds} rounds, {kills} killed runs, {time.monotonic() - started:.0f} s")
    bad = sum(counts["differences"] + counts["runs_failed"] for counts in totals.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
