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
`loader_error`, never dropped: a damaged container block lands as one message saying
where and what was skipped, and reading resumes at the next whole block; a record that does
not resolve to `avro_schema` lands as written; a base64 datum that no writer schema reads
names the field each failed at. A schema file that is missing or unreadable is a setting to
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
from fastavro.read import HEADER_SCHEMA, SchemaResolutionError

from cdc_dbt_spark.messages import Message, dumps
from cdc_dbt_spark.settings import project_dir

AVRO_MAGIC = b"Obj\x01"


class AvroSchemaError(Exception):
    """A format's settings in var cdc_formats the loader cannot use (a schema file missing or
    unreadable, an unknown carrier): a setting to fix, not a message to quarantine. Its text is
    one line that names the var to set."""


CARRIERS = ("json", "avro")  # how a format's messages are carried: JSON text, or Avro datums


def resolve_setting_path(value: str) -> Path:
    """A path from dbt_project.yml: absolute, or relative to the project. Never looked up
    outside the project: a clone must run with nothing beside it."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else project_dir() / path


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


def check_schemas(source_format: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Check a format's carrier and read every schema file its settings name, so that a wrong
    setting stops a load before it starts, with the var to set (rather than every message
    failing alike). The settings with the file each path names (`avro_schema_files`, absolute):
    Spark's tasks read them in folders of their own, and say in their reasons the paths as the
    settings write them."""
    var = f"cdc_formats.{source_format}"
    if settings.get("carrier") not in CARRIERS:
        raise AvroSchemaError(
            f"{var}.carrier: unknown carrier {settings.get('carrier')!r} (one of {', '.join(CARRIERS)}); "
            "set it in dbt_project.yml or --vars"
        )
    if not settings.get("avro_schema"):
        return settings
    load_schema(settings["avro_schema"], f"{var}.avro_schema")
    writers = settings.get("avro_writer_schemas") or []
    for writer in writers:
        load_schema(writer, f"{var}.avro_writer_schemas")
    named = [settings["avro_schema"], *writers]
    return settings | {"avro_schema_files": {value: str(resolve_setting_path(value)) for value in named}}


def _schema_file(settings: dict[str, Any], value: str) -> str:
    """The file a schema setting names: as check_schemas resolved it on the driver, else the value."""
    return (settings.get("avro_schema_files") or {}).get(value, value)


def split_avro(path: Path, data: bytes, settings: dict[str, Any] | None = None) -> Iterator[Message]:
    settings = settings or {}
    record_names = bool(settings.get("avro_union_record_names", False))
    if data[:4] == AVRO_MAGIC:
        yield from _split_container(data, record_names, settings.get("avro_schema"), settings)
    elif settings.get("avro_schema"):
        yield from _split_base64_lines(data, settings)
    else:
        yield Message(
            0, 0, data[:4096].decode("utf-8", errors="replace"), f"not an Avro object container file: {path.name}"
        )


def _split_container(
    data: bytes, record_names: bool, schema: str | None, settings: dict[str, Any]
) -> Iterator[Message]:
    """Records read with the writer schema in the file's header, resolved to `schema` if set.
    A block that cannot be read lands as one message with a loader_error (where, and what was
    skipped), and reading resumes at the next whole block; a record that does not resolve to
    `schema` (e.g. an enum symbol of a newer writer) lands in its writer's form with a
    loader_error, and the records after it still land."""
    # outside the try: a setting, not the file
    reader_schema = load_schema(_schema_file(settings, schema)) if schema else None
    header_stream = io.BytesIO(data)
    try:
        header = fastavro.schemaless_reader(header_stream, HEADER_SCHEMA)
        writer_schema = fastavro.parse_schema(json.loads(header["meta"]["avro.schema"]))
    except Exception as exc:  # whatever the header holds, the file is reported
        yield Message(0, 0, "", f"the Avro container header cannot be read: {exc}")
        return
    head, marker = data[: header_stream.tell()], header["sync"]
    index, start = 0, len(head)
    while start is not None:
        stream = io.BytesIO(head + data[start:])
        read = 0  # records read in this pass (from `start`)
        try:
            try:
                for record in fastavro.reader(stream, reader_schema=reader_schema, return_record_name=record_names):
                    yield Message(index, index, dumps(record))
                    index, read = index + 1, read + 1
            except SchemaResolutionError:  # from here on, each record is resolved on its own
                stream = io.BytesIO(head + data[start:])
                for number, record in enumerate(fastavro.reader(stream, return_record_name=True)):
                    if number >= read:
                        yield _resolved(index, record, writer_schema, reader_schema, record_names, schema)
                        index += 1
            return
        except Exception as exc:  # a damaged block: land where, and read on from the next whole one
            stopped = start + stream.tell() - len(head)
            where = f"after record {index - 1}" if index else "before its first record"
            start = _next_block(data, head, marker, stopped)
            if start == stopped:
                skipped = "read on from the next block"
            else:  # the block that failed: from the last sync marker before it
                block = max(data.rfind(marker, len(head), stopped) + len(marker), len(head))
                lost = f"the block at bytes {block} to {start or len(data)} ({_block_count(data[block:])} records)"
                skipped = f"{lost} skipped, read on from the next whole block" if start else f"{lost} cannot be read"
            yield Message(index, index, "", f"Avro container damaged at byte {stopped}, {where}: {exc}; {skipped}")
            index += 1


def _resolved(
    index: int, record: Any, writer_schema: Any, reader_schema: Any, record_names: bool, schema: str | None
) -> Message:
    """A record read with its writer schema, resolved to the reader schema on its own."""
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, writer_schema, record)
    buffer.seek(0)
    try:
        resolved = fastavro.schemaless_reader(buffer, writer_schema, reader_schema, return_record_name=record_names)
    except Exception as exc:  # the record lands as written, with why
        return Message(index, index, dumps(record), f"record {index} does not fit the reader schema {schema}: {exc}")
    return Message(index, index, dumps(resolved))


def _block_count(block: bytes) -> str:
    """The record count a block starts with, as text ('unknown' if unreadable)."""
    try:
        return str(fastavro.schemaless_reader(io.BytesIO(block), "long"))
    except Exception:  # only for the message
        return "unknown"


def _next_block(data: bytes, head: bytes, marker: bytes, position: int) -> int | None:
    """Where the next whole block (one that ends in the file's sync marker) starts, from
    `position` on: there (a damaged marker was only the marker), else after a sync marker."""
    candidates = [position]
    found = data.find(marker, max(position - len(marker), len(head)))
    while found >= 0:
        candidates.append(found + len(marker))
        found = data.find(marker, found + 1)
    for candidate in candidates:
        if candidate >= len(data):
            return None
        try:
            next(iter(fastavro.block_reader(io.BytesIO(head + data[candidate:]))))
        except Exception:  # not a block start: try the next
            continue
        return candidate
    return None


def decode_datum(datum: bytes, settings: dict[str, Any], record_names: bool = True) -> Any:
    """Decode one schemaless datum with the first writer schema that consumes it exactly; if
    none does, the error says, for each, at which field it failed."""
    reader_schema = load_schema(_schema_file(settings, settings["avro_schema"]))
    writers = [settings["avro_schema"], *settings.get("avro_writer_schemas", [])]
    errors = []
    for number, writer in enumerate(writers):
        writer_schema = load_schema(_schema_file(settings, writer), "avro_writer_schemas" if number else "avro_schema")
        buffer = io.BytesIO(datum)
        try:
            record = fastavro.schemaless_reader(buffer, writer_schema, reader_schema, return_record_name=record_names)
        except Exception:  # say where, then try the next writer schema
            errors.append(f"{Path(writer).name}: {_where_datum_fails(datum, writer_schema)}")
            continue
        if buffer.tell() == len(datum):
            return record
        errors.append(f"{Path(writer).name}: {len(datum) - buffer.tell()} bytes left over after the last field")
    raise ValueError("no writer schema decodes the datum (" + "; ".join(errors) + ")")


def _where_datum_fails(datum: bytes, writer_schema: dict) -> str:
    """The first top-level field of `writer_schema` that `datum` cannot be read as, and why:
    the datum is read with ever longer prefixes of the record's fields."""
    fields = writer_schema["fields"]
    base = {key: value for key, value in writer_schema.items() if not key.startswith("__")}
    for count in range(1, len(fields) + 1):
        try:
            fastavro.schemaless_reader(io.BytesIO(datum), fastavro.parse_schema({**base, "fields": fields[:count]}))
        except EOFError:
            return f"field {fields[count - 1]['name']}: the datum ends inside it (truncated)"
        except IndexError:
            return f"field {fields[count - 1]['name']}: an enum symbol or union branch the schema does not have"
        except Exception as exc:  # any other reason, as the decoder says it
            return f"field {fields[count - 1]['name']}: {exc}"
    return "it cannot be read"


def datum_text(datum: bytes, settings: dict[str, Any]) -> str:
    """One schemaless datum as the loader lands it (a base64 line of a file, a Kafka record's
    value): decoded by `decode_datum`, union records named as `avro_union_record_names` says,
    rendered as JSON. ValueError if no schema decodes it."""
    record_names = bool(settings.get("avro_union_record_names", False))
    return dumps(decode_datum(datum, settings, record_names))


def _split_base64_lines(data: bytes, settings: dict[str, Any]) -> Iterator[Message]:
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
            yield Message(index, line_offset, datum_text(datum, settings))
        except (binascii.Error, ValueError) as exc:
            yield Message(index, line_offset, text, f"not a base64 Avro datum of {settings['avro_schema']}: {exc}")
        index += 1
