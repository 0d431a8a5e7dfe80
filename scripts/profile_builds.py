"""Profile small incremental builds on a saved warehouse, settings alternated (cdc_bench.profile_builds).

python scripts/profile_builds.py [ARGS]      (the same as: python -m cdc_bench.profile_builds)
"""

import sys

from cdc_bench.profile_builds import main

if __name__ == "__main__":
    sys.exit(main())
