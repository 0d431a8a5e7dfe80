"""The demo: land every format's sample messages, dbt build, print a summary (cdc_ops.demo).

python scripts/demo.py [ARGS]      (the same as: python -m cdc_ops.demo)
"""

import sys

from cdc_ops.demo import main

if __name__ == "__main__":
    sys.exit(main())
