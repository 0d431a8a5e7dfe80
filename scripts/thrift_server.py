"""Start or stop a Spark Thrift Server for target `thrift` (cdc_ops.thrift_server).

python scripts/thrift_server.py [ARGS]      (the same as: python -m cdc_ops.thrift_server)
"""

import sys

from cdc_ops.thrift_server import main

if __name__ == "__main__":
    sys.exit(main())
