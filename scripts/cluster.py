"""Start, inspect or stop the local Spark standalone cluster of target `cluster` (cdc_ops.cluster).

python scripts/cluster.py [ARGS]      (the same as: python -m cdc_ops.cluster)
"""

import sys

from cdc_ops.cluster import main

if __name__ == "__main__":
    sys.exit(main())
