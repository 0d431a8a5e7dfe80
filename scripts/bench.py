"""Benchmark: a full build, an incremental and a small run against the floor and two anchors (cdc_bench.bench).

python scripts/bench.py [ARGS]      (the same as: python -m cdc_bench.bench)
"""

import sys

from cdc_bench.bench import main

if __name__ == "__main__":
    sys.exit(main())
