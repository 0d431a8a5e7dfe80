"""The test kit: synthetic CDC scenarios and their Python replay (the oracle), one encoder module per
vendor family, Avro writers, the sample streams, fault injection, the soak and the end-to-end
harness the tests use. Not part of the product (cdc_dbt_spark): it depends on it, never the reverse.

    python -m cdc_testkit.generate --format dataworks_json --events 10000 --keys 1000 OUT_DIR
"""

from pathlib import Path

# The checkout the kit, its tests and the bench work on: the one they are installed from. The
# product never assumes this (cdc_dbt_spark.settings finds the project as dbt does).
PROJECT_ROOT = Path(__file__).resolve().parents[2]
