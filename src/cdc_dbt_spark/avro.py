"""Avro carriers: render each Avro datum as one JSON message (Spark has no Avro reader here).

An Avro object container file carries its writer schema; each record becomes a message,
resolved to the format's reader schema when it names one (`avro_schema` in var
cdc_formats, e.g. Alibaba DTS: the project's own schemas/dts_avro/dts_record.avsc).
A file that is not a container file is read as one base64-encoded datum per line when
the format names its schema; older writer schemas listed in `avro_writer_schemas` are
tried in turn and resolved to `avro_schema` (a datum must decode with nothing left over).
With `avro_union_record_names`, a union value that is a record is rendered as
`[full record name, record]`, so SQL knows which branch it is.
Values are rendered by `cdc_dbt_spark.messages.dumps`: bytes as base64, times as ISO-8601,
decimals as strings. A file or line that cannot be decoded is landed as a message with a
`loader_error`, never dropped; a schema file that is missing or unreadable is a setting to
fix (`AvroSchemaError`, one line naming the var), and nothing is landed.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import fastavro

from cdc_dbt_spark.connection import PROJECT_ROOT
from cdc_dbt_spark.messages import Message, dumps

AVRO_MAGIC = b"Obj\x01"


class AvroSchemaError(Exception):
    """A schema file named in var cdc_formats is missing or unreadable: a setting to fix, not
    a message to quarantine. Its text is one line that names the var to set."""


def resolve_setting_path(value: str) -> Path:
    """A path from dbt_project.yml: absolute, or relative to the project. Never looked up
    outside the project: a clone must run with nothing beside it."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


@cache  # per datum, so parsed once (a failure is not cached)
def load_schema(value: str, setting: str = "avro_schema") -> Any:
    """Parse the .avsc file a setting names; named types it refers to are read from
    `<namespace>.<name>.avsc` beside it (as Alibaba publishes the DTS types). A missing or
    unreadable file raises AvroSchemaError naming `setting`."""
    path = resolve_setting_path(value)
    fix = f"set var {setting} in dbt_project.yml to an Avro record schema file (.avsc, relative to the project)"
    if not path.is_file():
        raise AvroSchemaError(f"{setting}: no Avro schema file at {path}; {fix}")
    try:
        json.loads(path.read_text(encoding="utf-8"))  # fastavro would only say "Failed to load"
        schema = fastavro.parse_schema(fastavro.schema.load_schema(str(path)))
    except Exception as exc:  # unreadable, not JSON, not a schema, a named type missing
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise AvroSchemaError(f"{setting}: cannot read the Avro schema {path} ({reason}); {fix}") from None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise AvroSchemaError(f"{setting}: {path} is not an Avro record schema; {fix}")
    return schema


def check_schemas(source_format: str, settings: dict[str, Any]) -> None:
    """Read every schema file a format's settings name, so that a wrong path stops a load
    before it starts, with the var to set (rather than every message failing alike)."""
    var = f"cdc_formats.{source_format}"
    if settings.get("avro_schema"):
        load_schema(settings["avro_schema"], f"{var}.avro_schema")
        for writer in settings.get("avro_writer_schemas") or []:
            load_schema(writer, f"{var}.avro_writer_schemas")


def split_avro(path: Path, data: bytes, settings: dict[str, Any] | None = None) -> Iterator[Message]:
    settings = settings or {}
    record_names = bool(settings.get("avro_union_record_names", False))
    if data[:4] == AVRO_MAGIC:
        yield from _split_container(data, record_names, settings.get("avro_schema"))
    elif settings.get("avro_schema"):
        yield from _split_base64_lines(data, settings, record_names)
    else:
        yield Message(
            0, 0, data[:4096].decode("utf-8", errors="replace"), f"not an Avro object container file: {path.name}"
        )


def _split_container(data: bytes, record_names: bool, schema: str | None) -> Iterator[Message]:
    """Records read with the writer schema in the file's header, resolved to `schema` if set."""
    reader_schema = load_schema(schema) if schema else None  # outside the try: a setting, not the file
    count = 0  # records read
    try:
        reader = fastavro.reader(io.BytesIO(data), reader_schema=reader_schema, return_record_name=record_names)
        for count, record in enumerate(reader, start=1):
            yield Message(count - 1, count - 1, dumps(record))
    except Exception as exc:  # a corrupt header or block: keep what was read, land the rest as an error
        where = f"after record {count - 1}" if count else "before the first record"
        yield Message(count, count, "", f"Avro decoding stopped {where}: {exc}")


def decode_datum(datum: bytes, settings: dict[str, Any], record_names: bool = True) -> Any:
    """Decode one schemaless datum with the first writer schema that consumes it exactly."""
    reader_schema = load_schema(settings["avro_schema"])
    writers = [settings["avro_schema"], *settings.get("avro_writer_schemas", [])]
    errors = []
    for number, writer in enumerate(writers):
        writer_schema = load_schema(writer, "avro_writer_schemas" if number else "avro_schema")
        buffer = io.BytesIO(datum)
        try:
            record = fastavro.schemaless_reader(buffer, writer_schema, reader_schema, return_record_name=record_names)
        except Exception as exc:  # try the next writer schema
            errors.append(f"{Path(writer).name}: {exc}")
            continue
        if buffer.tell() == len(datum):
            return record
        errors.append(f"{Path(writer).name}: {len(datum) - buffer.tell()} bytes left over")
    raise ValueError("no writer schema decodes the datum (" + "; ".join(errors) + ")")


def _split_base64_lines(data: bytes, settings: dict[str, Any], record_names: bool) -> Iterator[Message]:
    offset = 0
    index = 0
    for raw_line in data.splitlines(keepends=True):
        line = raw_line.strip()
        line_offset = offset
        offset += len(raw_line)
        if not line:
            continue
        text = line.decode("ascii", errors="replace")
        try:
            datum = base64.b64decode(line, validate=True)
            yield Message(index, line_offset, dumps(decode_datum(datum, settings, record_names)))
        except (binascii.Error, ValueError) as exc:
            yield Message(index, line_offset, text, f"not a base64 Avro datum of {settings['avro_schema']}: {exc}")
        index += 1
