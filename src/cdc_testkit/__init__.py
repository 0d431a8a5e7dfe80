"""The test kit: synthetic CDC scenarios and their Python replay (the oracle), one encoder module per
vendor family, Avro writers, the sample streams, fault injection, the soak and the end-to-end
harness the tests use. Not part of the product (cdc_dbt_spark): it depends on it, never the reverse.

    python -m cdc_testkit.generate --format dataworks_json --events 10000 --keys 1000 OUT_DIR
"""
