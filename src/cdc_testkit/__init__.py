"""The test kit: synthetic CDC scenarios and their Python replay (the oracle), one encoder module per
vendor family, Avro writers, the sample streams, fault injection, the soak and the end-to-end
harness the tests use. Not part of the product (cdc_dbt_spark): it depends on it, never the reverse.

    python -m cdc_testkit.generate --format dataworks_json --events 10000 --keys 1000 OUT_DIR
"""

from pathlib import Path

from cdc_dbt_spark.connection import FIRST_TIER_JIT_OPTIONS

# The checkout the kit, its tests and the bench work on: the one they are installed from. The
# product never assumes this (cdc_dbt_spark.settings finds the project as dbt does).
PROJECT_ROOT = Path(__file__).resolve().parents[2]

# The JVM options of the kit's Spark processes (CDC_DRIVER_JAVA_OPTIONS, profiles.yml; the suite's
# conftest sets them), JVMs that work on a few thousand rows. The serial collector: two test
# workers and their child processes share two cores, and G1's parallel and concurrent threads take
# CPU from them. The JIT's first tier only: over small data the second tier's compiling is most of
# the CPU a fresh JVM uses (four small builds: 88 core-seconds against 145), and it takes that CPU
# from the other worker and from the processes the tests start. Two fresh JVMs side by side, as the
# workers run: 122 s against 178 for four builds each, 513 s against 540 for sixteen; from the
# seventh build on a tiered build is ~12 % faster, so a long-lived worker may win some of it back
# (the suite runs measured so far differ by less than the machine drifts). The first tier alone
# gets a 48 MB code cache by default, which a Spark driver outgrows (95 MB after sixteen builds):
# its sweeper then churns (38 s of those four builds), so the cache is the size tiered
# compilation gets (cdc_dbt_spark.connection.FIRST_TIER_JIT_OPTIONS, which `cdc-run --once` runs too).
# Tungsten's memory pages of 1 MB (spark.buffer.pageSize, a system property Spark's conf reads): Spark
# sizes them from the heap, 64 MB with the local target's 4 GB, and each sort or hash aggregate of a
# task takes a page however few its rows, an array the serial collector places in the old generation.
# A system property here rather than a profiles.yml variable: a profile default would be one fixed
# size for every user, where the product keeps Spark's own sizing from the heap.
# Three builds in a test process, two runs each way alternated: warm builds 26.7 and 23.4 s against
# 29.1 and 30.4 s, garbage-collection pauses 5.0 s (3 full) against 7.9 s (9 full).
# TEST_JVM_OPTIONS are the JVM's flags alone, for the kit's JVMs that are not an embedded driver:
# Spark refuses to start a context whose executor options set a Spark property
# (INVALID_EXECUTOR_SPARK_OPTIONS), so the cluster's executors and daemons, and the broker, get these.
TEST_JVM_OPTIONS = f"-XX:+UseSerialGC {FIRST_TIER_JIT_OPTIONS}"
TEST_JAVA_OPTIONS = f"{TEST_JVM_OPTIONS} -Dspark.buffer.pageSize=1m"
