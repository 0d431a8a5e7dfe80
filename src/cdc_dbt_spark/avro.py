"""Avro carriers: render each Avro datum as one JSON message (Spark has no Avro reader here).

An Avro object container file carries its schema; each record becomes a message.
A file that is not a container file is read as one base64-encoded datum per line when
the format names its schema (`avro_schema` in var cdc_formats, e.g. Alibaba DTS:
`com.alibaba.dts.formats.avro.Record`); older writer schemas listed in
`avro_writer_schemas` are tried in turn and resolved to `avro_schema` (a datum must
decode with nothing left over). With `avro_union_record_names`, a union value that is a
record is rendered as `[full record name, record]`, so SQL knows which branch it is.
Values are rendered by `cdc_dbt_spark.messages.dumps`: bytes as base64, times as ISO-8601,
decimals as strings. A file or line that cannot be decoded is landed as a message with a
`loader_error`, never dropped.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import fastavro

from cdc_dbt_spark.connection import PROJECT_ROOT
from cdc_dbt_spark.messages import Message, dumps

AVRO_MAGIC = b"Obj\x01"


def resolve_setting_path(value: str) -> Path:
    """A path from dbt_project.yml, relative to the project; when the project sits deeper
    than expected (a git worktree), the same relative path is looked up from its ancestors."""
    path = Path(value)
    if path.is_absolute():
        return path
    candidates = [PROJECT_ROOT / path] + [ancestor / path for ancestor in PROJECT_ROOT.parents]
    for candidate in candidates:
        if candidate.exists():
            return candidate.resolve()
    raise FileNotFoundError(f"Avro schema {value!r} not found relative to {PROJECT_ROOT} or its parents")


@cache
def load_schema(value: str) -> Any:
    """Parse an .avsc file; named types it refers to are read from `<namespace>.<name>.avsc` beside it."""
    return fastavro.parse_schema(fastavro.schema.load_schema(str(resolve_setting_path(value))))


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
    index = 0
    try:
        reader_schema = load_schema(schema) if schema else None
        reader = fastavro.reader(io.BytesIO(data), reader_schema=reader_schema, return_record_name=record_names)
        for index, record in enumerate(reader):
            yield Message(index, index, dumps(record))
    except Exception as exc:  # a corrupt block: keep what was read, land the rest as an error
        yield Message(index + 1, index + 1, "", f"Avro decoding stopped after record {index}: {exc}")


def decode_datum(datum: bytes, settings: dict[str, Any], record_names: bool = True) -> Any:
    """Decode one schemaless datum with the first writer schema that consumes it exactly."""
    reader_schema = load_schema(settings["avro_schema"])
    writers = [settings["avro_schema"], *settings.get("avro_writer_schemas", [])]
    errors = []
    for writer in writers:
        buffer = io.BytesIO(datum)
        try:
            record = fastavro.schemaless_reader(
                buffer, load_schema(writer), reader_schema, return_record_name=record_names
            )
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
