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
`one_pass_dataworks_json` adds to it the least of the contract that no design of the build can leave out
(typed images, dedupe, pairing, an events table): the bench's landed_one_pass step, a lower bound of a full build.
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


def dataworks_changes(lines: Any) -> Any:
    """The changes of the DataWorks JSON messages of `lines` (column value): table, key values, sequence, image."""
    from pyspark.sql import functions as F  # noqa: N812 (the usual alias)

    messages = lines.select(F.from_json("value", DATAWORKS_ENVELOPE).alias("m")).select("m.*")
    return messages.where(F.col("payload.op").isin("INSERT", "UPDATE_AFTER", "DELETE")).select(
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


def versioned(changes: Any) -> Any:
    """`changes` with valid_to and is_current: each change a version, closed by the next of its key."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    versions = Window.partitionBy("table_id", "key").orderBy("sequence")
    return changes.select(
        "*",
        F.lead("valid_from").over(versions).alias("valid_to"),
        F.lead("sequence").over(versions).isNull().alias("is_current"),
    )


def scd2_dataworks_json(spark: Any, lines: Any, out_dir: str) -> None:
    """SCD2 history and current rows of every table in the DataWorks JSON messages of `lines` (column value)."""
    write_history_and_current(spark, versioned(dataworks_changes(lines)), out_dir)


HISTORY_COLUMNS = ("table_id", "key", "sequence", "valid_from", "is_deleted", "row_image", "valid_to", "is_current")


def merge_dataworks_json(spark: Any, lines: Any, history_path: str) -> None:
    """The SCD2 MERGE of Delta Lake's documentation ("slowly changing data (SCD) Type 2 operation into
    Delta tables"): the increment's changes in `lines`, versioned among themselves, merged into the Delta
    history at `history_path` (written by scd2_dataworks_json's versions): the current version of each key
    they touch is closed by the key's first change, and every change is inserted as a version. As in the
    documentation, each change is staged twice: once with its key as the merge key (the first change of a
    key: it closes the stored current version) and once with none (never matched: always inserted).
    What it skips: late changes (a change older than a key's current version is inserted as if newer),
    deletes that end nothing, resent messages, and everything hand_written's job skips."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    increment = versioned(dataworks_changes(lines)).select(
        *HISTORY_COLUMNS, F.row_number().over(Window.partitionBy("table_id", "key").orderBy("sequence")).alias("n")
    )
    staged = increment.select(F.lit(None).cast("array<string>").alias("merge_key"), *HISTORY_COLUMNS).unionByName(
        increment.where("n = 1").select(F.col("key").alias("merge_key"), *HISTORY_COLUMNS)
    )
    staged.createOrReplaceTempView("hand_written_staged")
    spark.sql(
        f"""
        merge into delta.`{history_path}` as history
        using hand_written_staged as staged
        on history.table_id = staged.table_id and history.key = staged.merge_key and history.is_current
        when matched then update set is_current = false, valid_to = staged.valid_from
        when not matched and staged.merge_key is null then insert ({", ".join(HISTORY_COLUMNS)})
            values ({", ".join(f"staged.{column}" for column in HISTORY_COLUMNS)})
        """
    )


def write_history_and_current(spark: Any, history: Any, out_dir: str, table_format: str = "parquet") -> None:
    """`history` written under out_dir, then its current, live rows as `current`, without the closing columns,
    as tables of `table_format` (parquet, or delta as the build writes)."""
    history.write.format(table_format).mode("overwrite").save(f"{out_dir}/history")
    # current rows from the history just written: no second pass over the messages
    current = spark.read.format(table_format).load(f"{out_dir}/history").where("is_current and not is_deleted")
    closing = ("valid_to", "valid_to_sequence", "is_current", "is_deleted")  # drop() passes over absent ones
    current.drop(*closing).write.format(table_format).mode("overwrite").save(f"{out_dir}/current")


def one_pass_dataworks_json(spark: Any, lines: Any, out_dir: str, typed_image: Callable[[str], str]) -> None:
    """The hand-written job plus the least of the contract that no design of the build can leave out: typed
    row images, a message landed twice kept once, the records of one position (UPDATE_BEFOR and UPDATE_AFTER)
    made one change, and the changes written as a table (`events`) before history and current are written
    from it; all three are Delta tables, as the build's. One distribution by (table_id, key) serves the dedupe,
    the pairing and the write of `events`; history and current are the hand-written job's windows over `events`.

    typed_image(image) is the SQL that types a row image (a variant object) by the map `column_types` of
    column name -> vendor type: the project's own macro cdc_typed_image, compiled by the caller. Left out, as
    in the hand-written job: quarantine, truncates, DDL, partial images, key changes, incremental runs, tests.
    """
    # the hand-written job's envelope, plus the column types the images are typed by
    column_types = "dataColumn: array<struct<name: string, type: string>>"
    envelope = DATAWORKS_ENVELOPE.replace("primaryKey: array<string>>", f"primaryKey: array<string>, {column_types}>")
    changes_image = "coalesce(envelope.payload.after.dataColumn, envelope.payload.before.dataColumn)"
    records = (
        lines.selectExpr("value", f"from_json(value, '{envelope}') as envelope")
        .selectExpr(
            "xxhash64(value) as message_hash",
            "concat_ws('.', envelope.schema.source.dbName, envelope.schema.source.schemaName,"
            " envelope.schema.source.tableName) as table_id",
            "to_json(map_from_arrays(envelope.schema.primaryKey, transform(envelope.schema.primaryKey,"
            f" column_name -> variant_get({changes_image}, concat('$.', column_name))))) as key_json",
            "lpad(envelope.payload.sequenceId, 38, '0') as sequence_key",
            "timestamp_millis(envelope.payload.timestamp.eventTime) as commit_ts",
            "envelope.payload.op as vendor_op",
            "map_from_entries(envelope.schema.dataColumn) as column_types",
            "envelope.payload.before.dataColumn as before_columns",
            "envelope.payload.after.dataColumn as after_columns",
        )
        .where("vendor_op in ('INSERT', 'UPDATE_BEFOR', 'UPDATE_AFTER', 'DELETE')")
        .selectExpr(
            "*",
            f"{typed_image('before_columns')} as before_image",
            f"{typed_image('after_columns')} as after_image",
        )
    )
    records.createOrReplaceTempView("one_pass_records")
    events = spark.sql(
        """
        with distributed as (
            select * from one_pass_records distribute by table_id, key_json
        ),

        -- partitioned within the distribution by (table_id, key_json): no second shuffle
        copies as (
            select
                *,
                row_number() over (
                    partition by table_id, key_json, sequence_key, message_hash order by message_hash
                ) as copy_number
            from distributed
        )
        select
            table_id,
            key_json,
            sequence_key,
            if(
                max_by(after_image, if(after_image is not null, message_hash, null)) is null,
                'delete',
                if(max_by(vendor_op, if(after_image is not null, message_hash, null)) = 'INSERT', 'insert', 'update')
            ) as op,
            max_by(before_image, if(before_image is not null, message_hash, null)) as before_image,
            max_by(after_image, if(after_image is not null, message_hash, null)) as after_image,
            max(commit_ts) as commit_ts
        from copies
        where copy_number = 1
        group by table_id, key_json, sequence_key
        """
    )
    # Delta tables, as the build writes: the floor pays what the build pays per table
    events.write.format("delta").mode("overwrite").save(f"{out_dir}/events")
    spark.read.format("delta").load(f"{out_dir}/events").createOrReplaceTempView("one_pass_events")
    history = spark.sql(
        """
        select
            table_id,
            key_json,
            sequence_key as valid_from_sequence,
            lead(sequence_key) over versions as valid_to_sequence,
            commit_ts as valid_from,
            lead(commit_ts) over versions as valid_to,
            op = 'delete' as is_deleted,
            coalesce(after_image, before_image) as row_image,
            lead(sequence_key) over versions is null as is_current
        from one_pass_events
        window versions as (partition by table_id, key_json order by sequence_key)
        """
    )
    write_history_and_current(spark, history, out_dir, table_format="delta")


# formats with a hand-written job; for the others the bench reports the anchor as not available
HAND_WRITTEN: dict[str, Callable[[Any, Any, str], None]] = {"dataworks_json": scd2_dataworks_json}
# and the hand-written MERGE of an increment into the job's history (a Delta table at a path)
HAND_MERGE: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any, str], None]]] = {
    "dataworks_json": (lambda lines: versioned(dataworks_changes(lines)), merge_dataworks_json)
}
# and the same with the contract's least (one_pass_dataworks_json)
ONE_PASS: dict[str, Callable[[Any, Any, str, Callable[[str], str]], None]] = {"dataworks_json": one_pass_dataworks_json}
