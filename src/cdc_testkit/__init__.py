"""The test kit: synthetic CDC scenarios and their Python replay (the oracle), one encoder module per
vendor family, Avro writers, the sample streams, fault injection, the soak and the end-to-end
harness the tests use. Not part of the product (cdc_dbt_spark): it depends on it, never the reverse.

    python -m cdc_testkit.generate --format dataworks_json --events 10000 --keys 1000 OUT_DIR
"""

from pathlib import Path

# The checkout the kit, its tests and the bench work on: the one they are installed from. The
# product never assumes this (cdc_dbt_spark.settings finds the project as dbt does).
PROJECT_ROOT = Path(__file__).resolve().parents[2]

# The JIT's first tier only, for the kit's JVMs that live seconds or minutes over a few thousand
# rows (processes the tests start, the Kafka broker): its code is ready at once, where the second
# tier's compiling takes most of the CPU such a process uses (four small builds in a fresh JVM: 88
# core-seconds against 145). Not for the test workers' own JVMs, which live the whole suite: at
# sixteen builds the second tier's code has paid for itself (builds 401 s against 481). The first
# tier alone gets a 48 MB code cache by default, which a Spark driver outgrows (it held 95 MB
# after sixteen builds): the JVM's sweeper then churns (38 s of those four builds), so the cache
# is the size tiered compilation gets.
FIRST_TIER_JIT = ("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m")
