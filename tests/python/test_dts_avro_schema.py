"""The project's own DTS Avro schemas (schemas/dts_avro/) against Alibaba's published ones.

Alibaba's schemas are read from ../shared/thirdparty/dts_avro/ (see SOURCES.md there) by
this test only; the product reads its own. Ours must have the same fields, types and
defaults, and datums written with Alibaba's schemas (base64 lines and container files)
must decode with ours. No Spark: these tests run in seconds.
"""

from __future__ import annotations

import base64
import io
import json
import logging
from pathlib import Path
from typing import Any

import fastavro
import pytest
from fastavro.schema import to_parsing_canonical_form

from cdc_dbt_spark import avro, loader
from cdc_dbt_spark.loader import project_formats
from cdc_dbt_spark.messages import dumps
from cdc_ops import demo
from cdc_testkit.harness import PROJECT_ROOT, THIRDPARTY

ALIBABA = THIRDPARTY / "dts_avro"
NAMESPACE = "com.alibaba.dts.formats.avro."
SETTINGS = project_formats()["dts_avro"]


def alibaba_current() -> Any:
    """aliyun-dts-subscribe-demo python/dts_record_avsc: Record, named types in files beside it."""
    return fastavro.schema.load_schema(str(ALIBABA / "com.alibaba.dts.formats.avro.Record.avsc"))


def alibaba_sdk_java() -> Any:
    """The older Record embedded in aliyun-dts-subscribe-sdk-java (no bornTimestamp)."""
    return fastavro.parse_schema(json.loads((ALIBABA / "Record.sdk-java-embedded.avsc").read_text()))


def ours(setting: str) -> Any:
    value = SETTINGS[setting] if setting == "avro_schema" else SETTINGS[setting][0]
    return avro.load_schema(value, setting)


def defaults(schema: Any, path: str = "") -> dict[str, Any]:
    """Field path -> default, for every field of every record (defaults drive resolution and
    are not part of the canonical form)."""
    found: dict[str, Any] = {}
    if isinstance(schema, list):
        for branch in schema:
            found |= defaults(branch, path)
    elif isinstance(schema, dict) and schema.get("type") == "record":
        for field in schema["fields"]:
            where = f"{path}{schema['name']}.{field['name']}"
            found[where] = field.get("default", "<none>")
            found |= defaults(field["type"], where + "/")
    elif isinstance(schema, dict) and schema.get("type") in ("array", "map"):
        found |= defaults(schema.get("items", schema.get("values")), path)
    return found


def test_settings_name_the_projects_own_schemas() -> None:
    """The product reads nothing outside the project."""
    for value in [SETTINGS["avro_schema"], *SETTINGS["avro_writer_schemas"]]:
        path = avro.resolve_setting_path(value).resolve()
        assert path.is_relative_to(PROJECT_ROOT.resolve()) and path.is_file(), value
        assert path.parent == PROJECT_ROOT.resolve() / "schemas" / "dts_avro"


@pytest.mark.parametrize(
    ("setting", "alibaba"),
    [("avro_schema", alibaba_current), ("avro_writer_schemas", alibaba_sdk_java)],
    ids=["current", "sdk_java"],
)
def test_same_fields_types_and_defaults_as_alibabas(setting: str, alibaba) -> None:
    mine, theirs = ours(setting), alibaba()
    # the Parsing Canonical Form holds names, field order, types, symbols and union branches
    assert to_parsing_canonical_form(mine) == to_parsing_canonical_form(theirs)
    assert defaults(mine) == defaults(theirs)


def value(branch: str, **fields: Any) -> tuple[str, dict]:
    return (NAMESPACE + branch, fields)


ROW_CHANGE: dict[str, Any] = {
    "version": 1,
    "id": 72469001,
    "sourceTimestamp": 1_696_984_408,
    "sourcePosition": "72469@78",
    "safeSourcePosition": "72400@78",
    "sourceTxid": "1234",
    "source": {"sourceType": "MySQL", "version": "8.0.28"},
    "operation": "UPDATE",
    "objectName": "shop.orders",
    "processTimestamps": [1_696_984_408_100, 1_696_984_408_200],
    "tags": {"pk_uk_info": '{"PRIMARY":["id"]}', "thread_id": "7"},
    "fields": [{"name": f"c{number}", "dataTypeNumber": number} for number in range(14)],
    "beforeImages": None,
    "afterImages": [
        value("Integer", precision=20, value="-9223372036854775808"),
        value("Character", charset="utf8mb4", value="thé".encode()),
        value("Decimal", value="12345.678", precision=10, scale=3),
        value("Float", value=2.5, precision=22, scale=0),
        value("Timestamp", timestamp=1_696_984_408, millis=123),
        value("DateTime", year=2023, month=10, day=11, hour=0, minute=33, second=28, millis=None),
        value(
            "TimestampWithTimeZone",
            value={"year": 2023, "month": 10, "day": 11, "hour": 8, "minute": 0, "second": 0, "millis": 5},
            timezone="+08:00",
        ),
        value("BinaryGeometry", type="POINT", value=b"\x01\x01\x00"),
        value("TextGeometry", type="POINT", value="POINT(1 2)"),
        value("BinaryObject", type="BLOB", value=b"\x00\xff"),
        value("TextObject", type="JSON", value='{"a": 1}'),
        "NULL",
        "NONE",
        None,
    ],
    "bornTimestamp": 1_696_984_408_123,
}
ROW_CHANGE["beforeImages"] = list(reversed(ROW_CHANGE["afterImages"]))
DDL = {
    **ROW_CHANGE,
    "operation": "DDL",
    "tags": {},
    "fields": None,
    "beforeImages": None,
    "afterImages": "ALTER TABLE orders ADD COLUMN note VARCHAR(20)",
}
HEARTBEAT = {**DDL, "operation": "HEARTBEAT", "objectName": None, "afterImages": None, "processTimestamps": None}
RECORDS = [ROW_CHANGE, DDL, HEARTBEAT]


def written_by(alibaba) -> tuple[Any, list[dict], list[dict]]:
    """Alibaba's schema, the records as it takes them, and what our reader must return."""
    schema = alibaba()
    if alibaba is alibaba_current:
        return schema, RECORDS, RECORDS
    older = [{name: item for name, item in record.items() if name != "bornTimestamp"} for record in RECORDS]
    return schema, older, [{**record, "bornTimestamp": 0} for record in older]


def rendered(records: list[dict]) -> list[dict]:
    """What the loader must land: the records rendered as JSON by its own rules."""
    return [json.loads(dumps(record)) for record in records]


@pytest.mark.parametrize("alibaba", [alibaba_current, alibaba_sdk_java], ids=["current", "sdk_java"])
def test_base64_datums_written_with_alibabas_schemas_decode_with_ours(alibaba, tmp_path: Path) -> None:
    schema, records, expected = written_by(alibaba)
    lines = []
    for record in records:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, schema, record)
        lines.append(base64.b64encode(buffer.getvalue()) + b"\n")
    messages = list(avro.split_avro(tmp_path / "datums.txt", b"".join(lines), SETTINGS))
    assert [m.loader_error for m in messages] == [None] * len(records)
    assert [json.loads(m.text) for m in messages] == rendered(expected)


@pytest.mark.parametrize("alibaba", [alibaba_current, alibaba_sdk_java], ids=["current", "sdk_java"])
def test_container_files_written_with_alibabas_schemas_decode_with_ours(alibaba) -> None:
    """The header carries Alibaba's schema text; records are resolved to ours."""
    schema, records, expected = written_by(alibaba)
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, records)
    messages = list(avro.split_avro(Path("records.avro"), buffer.getvalue(), SETTINGS))
    assert [m.loader_error for m in messages] == [None] * len(records)
    assert [json.loads(m.text) for m in messages] == rendered(expected)


def test_union_values_render_alike_in_both_images() -> None:
    """A union record is [full record name, record], as flatten_dts_avro reads it; an enum
    (EmptyObject) is its symbol, whether the writer defines its type there (beforeImages)
    or refers to it by name (afterImages)."""
    images = rendered([ROW_CHANGE])[0]
    assert images["afterImages"][0] == [NAMESPACE + "Integer", {"precision": 20, "value": "-9223372036854775808"}]
    assert images["afterImages"][1] == [NAMESPACE + "Character", {"charset": "utf8mb4", "value": "dGjDqQ=="}]
    assert images["afterImages"][11:] == ["NULL", "NONE", None]
    assert images["beforeImages"][:3] == [None, "NONE", "NULL"]
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, ours("avro_schema"), ROW_CHANGE)
    assert json.loads(dumps(avro.decode_datum(buffer.getvalue(), SETTINGS))) == images


@pytest.fixture
def schema_setting(monkeypatch):
    """Point var cdc_formats.dts_avro.avro_schema at another path, for the loader and the demo;
    Spark must not start (the schema is checked first)."""

    def point_at(value: str) -> None:
        formats = {**project_formats(), "dts_avro": {**SETTINGS, "avro_schema": value}}
        monkeypatch.setattr(loader, "project_formats", lambda cli_vars=None: formats)
        monkeypatch.setattr(demo, "project_formats", lambda: formats)

        def no_spark(*args, **kwargs):
            raise AssertionError("Spark was started before the schema was checked")

        monkeypatch.setattr(loader, "connect", no_spark)

    return point_at


@pytest.mark.parametrize("problem", ["missing", "not_json", "a_folder"])
def test_a_missing_or_unreadable_schema_is_one_line_naming_the_var(
    problem: str, schema_setting, tmp_path: Path, caplog
) -> None:
    (tmp_path / "not_json.avsc").write_text("{not json")
    value = {
        "missing": str(tmp_path / "nowhere" / "dts_record.avsc"),
        "not_json": str(tmp_path / "not_json.avsc"),
        "a_folder": str(tmp_path),
    }[problem]
    schema_setting(value)

    # the loader: exit code 2, the reason logged on one line, no traceback
    with caplog.at_level(logging.INFO):
        assert loader.main(["--format", "dts_avro", str(PROJECT_ROOT / "sample_data" / "dts_avro")]) == 2
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    message = errors[0].getMessage()
    assert "\n" not in message and value in message
    assert message.startswith("cdc_formats.dts_avro.avro_schema: ")
    assert "set var cdc_formats.dts_avro.avro_schema in dbt_project.yml" in message

    # the demo (make demo): the same line and exit code, before anything is landed
    caplog.clear()
    with caplog.at_level(logging.INFO):
        assert demo.main() == 2
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [message]
