"""Soak: a runner on Kafka topics killed at random points loses and duplicates nothing (cdc_testkit.kafka_soak).

python scripts/soak_kafka.py [ARGS]      (the same as: python -m cdc_testkit.kafka_soak)
"""

import sys

from cdc_testkit.kafka_soak import main

if __name__ == "__main__":
    sys.exit(main())
