"""Profile one model's SQL on the warehouse a bench run left (cdc_bench.profile_model).

python scripts/profile_model.py [ARGS]      (the same as: python -m cdc_bench.profile_model)
"""

import sys

from cdc_bench.profile_model import main

if __name__ == "__main__":
    sys.exit(main())
