"""Soak: many random streams per format, with faults, checked against the replay (cdc_testkit.soak).

python scripts/soak.py [ARGS]      (the same as: python -m cdc_testkit.soak)
"""

import sys

from cdc_testkit.soak import main

if __name__ == "__main__":
    sys.exit(main())
