"""The demo: land the sample messages of every format, build, and show what came out.

    python scripts/demo.py            (or: make demo)

Runs on the embedded default (target `local`, schema `cdc`). Re-running it lands
nothing twice and rebuilds incrementally.
"""

from __future__ import annotations

import argparse
import logging
import sys

from cdc_dbt_spark.avro import AvroSchemaError, check_schemas
from cdc_dbt_spark.connection import connect
from cdc_dbt_spark.loader import land, project_formats
from cdc_dbt_spark.settings import add_project_arguments, profiles_dir, project_dir, use_project

log = logging.getLogger("demo")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_project_arguments(parser)
    args = parser.parse_args(argv)
    use_project(args.project_dir, args.profiles_dir)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:  # every format's schema files, before anything is landed
        for source_format, settings in project_formats().items():
            check_schemas(source_format, settings)
    except AvroSchemaError as exc:
        log.error("%s", exc)
        return 2
    for source_format in project_formats():
        folder = project_dir() / "sample_data" / source_format
        if not folder.is_dir():
            log.warning("no sample messages for %s under %s", source_format, folder)
            continue
        stats = land(source_format, [str(folder)])
        log.info(
            "%s: landed %d messages (%d files already landed)", source_format, stats["messages"], stats["files_skipped"]
        )

    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(["build", "--profiles-dir", str(profiles_dir()), "--project-dir", str(project_dir())])
    if not result.success:
        log.error("dbt build failed; see logs/dbt.log")
        return 1

    connection = connect()
    schema = connection.schema
    print("\n== cdc_current: live rows per format and table")
    for row in connection.sql(
        f"select source_format, table_id, count(*) from {schema}.cdc_current group by 1, 2 order by 1, 2"
    ):
        print(f"  {row[0]:16s} {row[1]:40s} {row[2]:5d} rows")
    print("\n== cdc_history: versions per format (deleted versions in brackets)")
    for row in connection.sql(
        f"select source_format, count(*), count_if(is_deleted) from {schema}.cdc_history group by 1 order by 1"
    ):
        print(f"  {row[0]:16s} {row[1]:5d} versions ({row[2]} deleted)")
    print("\n== a few current rows")
    for row in connection.sql(
        f"select table_id, key_json, to_json(row_image) from {schema}.cdc_current order by 1, 2 limit 8"
    ):
        print(f"  {row[0]} {row[1]}\n      {row[2]}")
    print("\n== side tables")
    for table in ("cdc_ddl_events", "cdc_heartbeats", "cdc_quarantine"):
        count = connection.sql(f"select count(*) from {schema}.{table}")[0][0]
        print(f"  {table:16s} {count:5d} rows")
    print(
        "\nBrowse the documentation and lineage:\n"
        "  .venv/bin/dbt docs generate --profiles-dir profiles && "
        ".venv/bin/dbt docs serve --profiles-dir profiles --port 8080\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
