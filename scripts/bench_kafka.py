"""Benchmark: landing from a Kafka topic against landing the same messages from files, and the floor
(cdc_bench.kafka_landing).

python scripts/bench_kafka.py [ARGS]      (the same as: python -m cdc_bench.kafka_landing)
"""

import sys

from cdc_bench.kafka_landing import main

if __name__ == "__main__":
    sys.exit(main())
