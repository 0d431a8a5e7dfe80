"""Write a synthetic CDC stream in one format.

python -m cdc_testkit.generate --format dataworks_json --events 10000 --keys 1000 OUT_DIR
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from cdc_testkit.encoders import ENCODERS
from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import write_stream

log = logging.getLogger("cdc_testkit.generate")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a synthetic CDC stream in one format.")
    parser.add_argument("--format", default="dataworks_json", choices=sorted(ENCODERS))
    parser.add_argument("--seed", type=int, default=1, help="random seed of the scenario")
    parser.add_argument("--events", type=int, default=10_000, help="source changes to generate")
    parser.add_argument("--keys", type=int, default=1_000, help="keys per table")
    parser.add_argument("--tables", type=int, default=3, help="number of source tables")
    parser.add_argument("--files", type=int, default=1, help="spread the messages over this many files")
    parser.add_argument("--duplicate-share", type=float, default=0.0, help="share of messages sent twice")
    parser.add_argument("--no-shuffle", action="store_true", help="keep messages in commit order")
    parser.add_argument("out_dir", type=Path, help="folder to write the files into")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    scenario = Scenario(seed=args.seed, tables=args.tables, keys=args.keys, events=args.events)
    changes = scenario.generate()
    paths = write_stream(
        changes, args.format, args.out_dir, args.files, args.seed, args.duplicate_share, not args.no_shuffle
    )
    log.info("wrote %d changes as %s into %d files under %s", len(changes), args.format, len(paths), args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
