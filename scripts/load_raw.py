"""Land CDC messages, untouched, in the `raw_cdc_messages` table (the `cdc-load` command).

    python scripts/load_raw.py --format dataworks_json PATH [PATH ...]

See `cdc_dbt_spark.loader` and `--help`.
"""

import sys

from cdc_dbt_spark.loader import main

if __name__ == "__main__":
    sys.exit(main())
