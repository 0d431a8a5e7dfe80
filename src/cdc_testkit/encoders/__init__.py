"""One encoder per format, one module per vendor family: each renders a `Change` as the
messages that vendor would send."""

from __future__ import annotations

from collections.abc import Callable

from cdc_testkit.encoders.alibaba import datahub_tuple, dataworks_json
from cdc_testkit.encoders.datastream import datastream_json
from cdc_testkit.encoders.dts import canal_json, dts_avro, shareplex_json
from cdc_testkit.encoders.huawei import cdl_json, debezium_json
from cdc_testkit.scenario import Change

ENCODERS: dict[str, Callable[[Change], list[dict | None]]] = {
    "dataworks_json": dataworks_json,
    "cdl_json": cdl_json,
    "debezium_json": debezium_json,
    "datahub_tuple": datahub_tuple,
    "shareplex_json": shareplex_json,
    "canal_json": canal_json,
    "dts_avro": dts_avro,
    "datastream_json": datastream_json,
    "datastream_avro": datastream_json,  # the same events, written as Avro container files
}


# the formats whose streams cannot carry a truncate: scenarios for them must not contain one
CANNOT_TRUNCATE = frozenset({"datahub_tuple", "cdl_json", "datastream_json", "datastream_avro"})
# the formats whose files are binary containers, not lines of text
CONTAINER_FORMATS = frozenset({"datastream_avro"})


__all__ = [
    "CANNOT_TRUNCATE",
    "CONTAINER_FORMATS",
    "ENCODERS",
    "canal_json",
    "cdl_json",
    "datahub_tuple",
    "datastream_json",
    "dataworks_json",
    "debezium_json",
    "dts_avro",
    "shareplex_json",
]
