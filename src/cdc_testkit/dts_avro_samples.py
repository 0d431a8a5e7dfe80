"""Write sample_data/dts_avro/: synthetic Alibaba DTS Avro records (no public binary samples
exist), encoded by fastavro with the DTS schemas named in dbt_project.yml (schemas/dts_avro/).

    python -m cdc_testkit.dts_avro_samples
"""

from __future__ import annotations

import sys

from cdc_testkit import PROJECT_ROOT
from cdc_testkit.avro_files import write_dts_avro
from cdc_testkit.encoders.dts import dts_avro
from cdc_testkit.scenario import Change

OUT = PROJECT_ROOT / "sample_data" / "dts_avro"
T0 = 1_696_984_408_000


def changes() -> list[Change]:
    def change(kind: str, sequence: int, before=None, after=None, **extra) -> Change:
        return Change(kind, "shop", "orders", sequence, T0 + sequence * 1000, ("id",), before, after, **extra)

    return [
        change("begin", 1),
        change("insert", 2, after={"id": 1, "name": "tea", "amount": 2.5, "updated": T0 + 2000}),
        change("commit", 3),
        change(
            "update", 4, before={"id": 1, "name": "tea", "amount": 2.5}, after={"id": 1, "name": "tea", "amount": 3.0}
        ),
        change("ddl", 5, ddl="ALTER TABLE orders ADD COLUMN note VARCHAR(20)"),
        change("insert", 6, after={"id": 2, "name": "cake", "amount": 4.0}),
        change("delete", 7, before={"id": 2, "name": "cake", "amount": 4.0}),
        change("heartbeat", 8),
    ]


def main() -> int:
    records = [record for change in changes() for record in dts_avro(change)]
    write_dts_avro(records[:5], OUT / "dts_records_base64.txt")
    write_dts_avro(records[5:7], OUT / "dts_records_sdk_java_writer_base64.txt", legacy_writer=True)
    write_dts_avro(records[7:], OUT / "dts_records.avro", container=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
