"""Delta Lake's jars and Spark's Kafka source, resolved once by `make setup` into the Spark that
PySpark runs.

    python -m cdc_dbt_spark.spark_jars      (make setup and the test command run it)

Delta Lake's jar must match Spark's minor version (`io.delta:delta-spark_<spark minor>_2.13`), so
its coordinate is built from the two pins in requirements.txt, as `delta.configure_spark_with_delta_pip`
builds it: PySpark's version and the `delta-spark` package's. Moving up is those two lines. Spark's
Kafka source (`org.apache.spark:spark-sql-kafka-0-10_2.13`, with the Kafka client) is Spark's own
version, as Spark's documentation says to add it.

Spark resolves the coordinates from Maven Central with Ivy (`spark.jars.packages`, cached in Ivy's
default cache, `~/.ivy2.5.2`, or `CDC_IVY_HOME`). The jars it resolved are then copied into the
`jars/` folder of PySpark's Spark (`SPARK_HOME/jars`), as Spark images ship Delta, except those of
an artifact Spark already ships (Jackson, Hadoop's client, Parquet, log4j...: Spark's own, newer,
would win anyway). So every JVM the project starts has Delta on its class path, whatever its
working folder: dbt, the loader, the Thrift server, the local cluster's workers. Naming the
package in the profile instead (`spark.jars.packages`) made Ivy resolve it at every JVM start,
3-4 s each here (12.1 and 11.6 s to a session against 8.5 and 9.1 s with the jars given
directly), and `spark.jars` takes no glob that survives into the SparkContext.

The jars copied are listed in `MANIFEST` inside the folder: a run for another coordinate (an
upgrade) removes them before copying the new ones.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
from importlib.metadata import version
from pathlib import Path
from urllib.parse import unquote, urlsplit

log = logging.getLogger("spark_jars")

MANIFEST = "cdc-delta-jars.txt"
# artifacts Spark ships under another name: jcl-over-slf4j holds commons-logging's classes
SHIPPED_AS = {"commons-logging": "jcl-over-slf4j"}
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-\d")


def spark_jars_dir() -> Path:
    """The `jars/` folder of the Spark that PySpark runs (its SPARK_HOME, inside the wheel)."""
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def delta_coordinate() -> str:
    """The Maven coordinate of Delta Lake for the installed PySpark and delta-spark."""
    spark_minor = ".".join(version("pyspark").split(".")[:2])
    return f"io.delta:delta-spark_{spark_minor}_2.13:{version('delta-spark')}"


def kafka_coordinate() -> str:
    """The Maven coordinate of Spark's Kafka source for the installed PySpark."""
    return f"org.apache.spark:spark-sql-kafka-0-10_2.13:{version('pyspark')}"


def coordinates() -> str:
    """What `make setup` resolves, as `spark.jars.packages` takes it."""
    return f"{delta_coordinate()},{kafka_coordinate()}"


def artifact_name(jar_name: str, ivy: bool = False) -> str:
    """The artifact a jar holds, without its version (and, for a jar Ivy retrieved, named
    `organisation_artifact-version.jar`, without the organisation): `parquet-hadoop-1.17.0.jar`
    and Ivy's `org.apache.parquet_parquet-hadoop-1.16.0.jar` -> `parquet-hadoop`."""
    name = jar_name.split("_", 1)[1] if ivy else jar_name
    match = _VERSIONED_JAR.match(name)
    return match.group("artifact") if match else name


def resolve_with_ivy(coordinate: str) -> list[Path]:
    """The jars of `coordinate` and its dependencies, resolved by Spark's own Ivy resolution."""
    from pyspark.sql import SparkSession

    from cdc_dbt_spark.connection import end_spark

    builder = (
        SparkSession.builder.master("local[1]")
        .appName("cdc-spark-jars")
        .config("spark.ui.enabled", "false")
        .config("spark.jars.packages", coordinate)
    )
    if os.environ.get("CDC_IVY_HOME"):
        builder = builder.config("spark.jars.ivy", os.environ["CDC_IVY_HOME"])
    log.info("resolving %s (Maven Central, through Ivy)", coordinate)
    spark = builder.getOrCreate()
    uris = spark.sparkContext.getConf().get("spark.jars").split(",")
    end_spark(spark)
    return [Path(unquote(urlsplit(uri).path)) for uri in uris]


def install(jars: list[Path], coordinate: str, folder: Path) -> list[Path]:
    """Copies `jars` into `folder`, but those of an artifact a jar in `folder` already provides;
    removes first the jars an earlier run listed in the manifest. The jars copied."""
    manifest = folder / MANIFEST
    if manifest.is_file():
        for name in manifest.read_text().split("\n")[1:]:
            if name:
                (folder / name).unlink(missing_ok=True)
    shipped = {artifact_name(jar.name) for jar in folder.glob("*.jar")}
    copied = []
    for jar in jars:
        artifact = artifact_name(jar.name, ivy=True)
        if artifact in shipped or SHIPPED_AS.get(artifact) in shipped:
            continue
        shutil.copy2(jar, folder / jar.name)
        copied.append(folder / jar.name)
    manifest.write_text("\n".join([coordinate, *(jar.name for jar in copied)]) + "\n")
    return copied


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    coordinate = coordinates()
    folder = spark_jars_dir()
    manifest = folder / MANIFEST
    if manifest.is_file() and manifest.read_text().split("\n")[0] == coordinate:
        log.info("%s: already in %s", coordinate, folder)
        return 0
    copied = install(resolve_with_ivy(coordinate), coordinate, folder)
    size = sum(jar.stat().st_size for jar in copied)
    log.info("%s: %d jars copied into %s (%d MB)", coordinate, len(copied), folder, size >> 20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
