"""Benchmark anchor: the one-job SCD2 a Spark user would write by hand over the raw messages.

    write_scd2 = HAND_WRITTEN["dataworks_json"]; write_scd2(spark, spark.read.text(RAW_DIR), OUT_DIR)

The messages are a DataFrame of one string column, `value`: the raw files read as text, or (the bench's
landed_hand_written step) the landed messages, which is the least any model over the landing table must do.
Plain PySpark, one job: parse the envelope fields it needs with from_json, key each change by its primary key
values, `lead()` over (table_id, key) in sequence order for valid_to, write `history` and `current` as parquet.

What it skips that the pipeline does: dedupe (a resent message becomes a second, zero-length version);
quarantine (a message it cannot parse is dropped or yields null fields, silently); update pairing (UPDATE_BEFOR
is ignored, the UPDATE_AFTER image is taken as complete); partial images; truncates and DDL; late data and
incremental runs (it rebuilds everything from all files every time); typed images; data tests; other formats.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# only the fields the job reads; images stay VARIANT, as the pipeline keeps them
DATAWORKS_ENVELOPE = """struct<
    schema: struct<source: struct<dbName: string, schemaName: string, tableName: string>, primaryKey: array<string>>,
    payload: struct<
        op: string,
        sequenceId: string,
        timestamp: struct<eventTime: bigint>,
        before: struct<dataColumn: variant>,
        after: struct<dataColumn: variant>
    >
>"""


def scd2_dataworks_json(spark: Any, lines: Any, out_dir: str) -> None:
    """SCD2 history and current rows of every table in the DataWorks JSON messages of `lines` (column value)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812 (the usual alias)

    messages = lines.select(F.from_json("value", DATAWORKS_ENVELOPE).alias("m")).select("m.*")
    changes = messages.where(F.col("payload.op").isin("INSERT", "UPDATE_AFTER", "DELETE")).select(
        F.concat_ws(".", "schema.source.dbName", "schema.source.schemaName", "schema.source.tableName").alias(
            "table_id"
        ),
        # a DELETE carries only the before image: its key values come from there
        F.expr(
            "transform(schema.primaryKey, c -> variant_get("
            "coalesce(payload.after.dataColumn, payload.before.dataColumn), concat('$.', c), 'string'))"
        ).alias("key"),
        F.col("payload.sequenceId").cast("bigint").alias("sequence"),
        F.timestamp_millis("payload.timestamp.eventTime").alias("valid_from"),
        (F.col("payload.op") == "DELETE").alias("is_deleted"),
        F.col("payload.after.dataColumn").alias("row_image"),
    )
    versions = Window.partitionBy("table_id", "key").orderBy("sequence")
    history = changes.select(
        "*",
        F.lead("valid_from").over(versions).alias("valid_to"),
        F.lead("sequence").over(versions).isNull().alias("is_current"),
    )
    history.write.mode("overwrite").parquet(f"{out_dir}/history")
    # current rows from the history just written: no second pass over the raw files
    current = spark.read.parquet(f"{out_dir}/history").where("is_current and not is_deleted")
    current.drop("valid_to", "is_current", "is_deleted").write.mode("overwrite").parquet(f"{out_dir}/current")


# formats with a hand-written job; for the others the bench reports the anchor as not available
HAND_WRITTEN: dict[str, Callable[[Any, str, str], None]] = {"dataworks_json": scd2_dataworks_json}
