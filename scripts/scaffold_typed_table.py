"""Add a typed per-table model for one source table (cdc_ops.scaffold_typed_table).

python scripts/scaffold_typed_table.py [ARGS]      (the same as: python -m cdc_ops.scaffold_typed_table)
"""

import sys

from cdc_ops.scaffold_typed_table import main

if __name__ == "__main__":
    sys.exit(main())
