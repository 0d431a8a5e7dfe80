"""A class-data archive of the embedded Spark's JVM (Java's AppCDS), made once by `make setup`.

Every process that starts Spark on the embedded default (each dbt invocation, the loader, the
scripts) loads the same thousands of classes from Spark's jars: measured here, about half of
the 8 s before its first query. The `local` target's `spark.driver.extraJavaOptions` names an
archive of them (`-XX:SharedArchiveFile`, profiles/profiles.yml); with it, the JVM maps them
instead of loading them. Without the file, or with one another Java or another Spark made, the
JVM ignores the option and starts as before.

    python -m cdc_dbt_spark.class_archive      (make setup runs it)

It runs a small workload of what a build does (Delta tables, JSON and VARIANT parsing,
windows, an insert overwrite, a Python task) in a warehouse of its own, and the JVM writes the
classes it loaded when it exits.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path

from cdc_dbt_spark.connection import end_spark, spark_conf
from cdc_dbt_spark.settings import project_dir

log = logging.getLogger("class_archive")
JAVA_OPTIONS = "spark.driver.extraJavaOptions"
ARCHIVE_OPTION = "-XX:SharedArchiveFile="

WORKLOAD = (
    "create database if not exists archive",
    "create table archive.landed (message_text string, load_batch_id bigint) using delta "
    "partitioned by (load_batch_id)",
    "insert into archive.landed values "
    """('{"payload": {"op": "INSERT", "after": {"id": 1, "v": "a"}}}', 1), """
    """('{"payload": {"op": "UPDATE", "after": {"id": 1, "v": "b"}}}', 1)""",
    "create table archive.parsed using delta partitioned by (load_batch_id) as "
    "select load_batch_id, sha2(message_text, 256) as message_id, parse_json(message_text) as message, "
    "from_json(message_text, 'payload struct<op: string, after: variant>', map('mode', 'PERMISSIVE')) as envelope "
    "from archive.landed",
    "create table archive.windowed like archive.parsed",
    "insert overwrite table archive.windowed partition (load_batch_id) "
    "select load_batch_id, message_id, message, envelope from ("
    "  select *, lead(message_id) over (partition by envelope.payload.op order by message_id) as next_id,"
    "  to_variant_object(map_from_arrays(array('a'), array(try_variant_get(message, '$.payload.after')))) as image"
    "  from archive.parsed) as windowed where next_id is null or image is not null",
    "select count(*), max_by(message_id, load_batch_id), collect_list(to_json(message)) from archive.windowed",
)


def archive_path(conf: dict[str, str]) -> Path | None:
    """The archive the target's driver options name, if any (relative to the project root)."""
    for option in conf.get(JAVA_OPTIONS, "").split():
        if option.startswith(ARCHIVE_OPTION):
            path = Path(option.removeprefix(ARCHIVE_OPTION))
            return path if path.is_absolute() else project_dir() / path
    return None


def make_archive(target: str = "local") -> Path | None:
    """Writes the archive the target names (replacing it); its path, or None if it names none."""
    from pyspark.sql import SparkSession

    with tempfile.TemporaryDirectory(prefix="class-archive-") as home:
        os.environ["CDC_SPARK_HOME"] = home  # the workload's warehouse and metastore
        conf = spark_conf(target)
        archive = archive_path(conf)
        if archive is None:
            return None
        archive.parent.mkdir(parents=True, exist_ok=True)
        written = archive.with_name(archive.name + ".tmp")
        written.unlink(missing_ok=True)
        # the JVM that writes an archive must not read one (it may be stale, or half-written)
        options = [option for option in conf[JAVA_OPTIONS].split() if not option.startswith(ARCHIVE_OPTION)]
        # (and not log each class it cannot keep: those of signed jars, generated ones)
        conf[JAVA_OPTIONS] = " ".join([*options, f"-XX:ArchiveClassesAtExit={written}", "-Xlog:cds*=off"])
        os.chdir(project_dir())  # profile paths are relative to the project root
        builder = SparkSession.builder.enableHiveSupport().appName("cdc-class-archive")
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        for key, value in conf.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        for statement in WORKLOAD:
            spark.sql(statement).collect()
        # a Python task, as the loader runs them
        spark.range(4).mapInArrow(lambda batches: batches, "id long").collect()
        # the JVM writes the archive as it exits
        if end_spark(spark) != 0 or not written.is_file():
            raise SystemExit(f"the JVM wrote no class archive to {written}")
        written.replace(archive)
    return archive


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    archive = make_archive()
    if archive is None:
        log.info("the local target names no class archive (%s%s): nothing to do", JAVA_OPTIONS, ARCHIVE_OPTION)
    else:
        log.info("wrote %s (%d MB)", archive.relative_to(project_dir()), archive.stat().st_size >> 20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
