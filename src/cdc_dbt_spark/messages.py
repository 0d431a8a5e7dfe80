"""Split landed files into messages, byte-exact, without interpreting them.

A file may hold JSON lines, one JSON array, or concatenated (pretty-printed)
JSON values, optionally gzip-compressed. Anything that is not JSON is still
returned as a message (one per line) so that SQL can quarantine it with a
reason: the loader never drops or rejects input.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"
UTF8_BOM = "\ufeff"


@dataclass(frozen=True)
class Message:
    index: int  # position of the message in its file, from 0
    byte_offset: int  # character offset in the decoded text (record number for Avro)
    text: str
    loader_error: str | None = None


def read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":  # gzip magic, whatever the file is called
        data = gzip.decompress(data)
    return data


def _decode_lines(data: bytes) -> tuple[str, dict[int, str]]:
    """Decode UTF-8; lines that are not valid UTF-8 are decoded with U+FFFD and flagged."""
    try:
        return data.decode("utf-8"), {}
    except UnicodeDecodeError:
        pass
    parts: list[str] = []
    errors: dict[int, str] = {}
    offset = 0
    for line in data.splitlines(keepends=True):
        try:
            parts.append(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            errors[offset] = f"invalid UTF-8 at byte {exc.start} of the message"
            parts.append(line.decode("utf-8", errors="replace"))
        offset += len(parts[-1])
    return "".join(parts), errors


def split_json_text(data: bytes) -> Iterator[Message]:
    text, utf8_errors = _decode_lines(data)
    start = 0
    if text.startswith(UTF8_BOM):
        start = 1
    counter = 0

    def message(begin: int, end: int) -> Message:
        nonlocal counter
        error = None
        if utf8_errors:
            line_start = text.rfind("\n", 0, begin) + 1
            error = utf8_errors.get(line_start)
        item = Message(counter, begin, text[begin:end], error)
        counter += 1
        return item

    position = _skip_whitespace(text, start)
    if position < len(text) and text[position] == "[":
        elements = _array_elements(text, position)
        if elements is not None:
            for begin, end in elements:
                yield message(begin, end)
            return

    length = len(text)
    while position < length:
        line_end = text.find("\n", position)
        if line_end < 0:
            line_end = length
        line = text[position:line_end].rstrip()
        # Fast path for JSON lines: a line that opens and closes an object is one
        # message; SQL validates it. Only other lines need the JSON scanner.
        if line[:1] == "{" and line[-1:] == "}":
            yield message(position, position + len(line))
            position = _skip_whitespace(text, line_end)
            continue
        try:
            _, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError:
            end = -1
        if end > 0 and (end == length or text[end] in _WHITESPACE):
            yield message(position, end)
            position = _skip_whitespace(text, end)
        else:  # not JSON: land the line as it is, for quarantine
            yield message(position, position + len(line))
            position = _skip_whitespace(text, line_end)


def _skip_whitespace(text: str, position: int) -> int:
    length = len(text)
    while position < length and text[position] in _WHITESPACE:
        position += 1
    return position


def _array_elements(text: str, position: int) -> list[tuple[int, int]] | None:
    """Spans of the elements of a top-level JSON array, or None if it is not one."""
    spans: list[tuple[int, int]] = []
    position = _skip_whitespace(text, position + 1)
    if position < len(text) and text[position] == "]":
        return spans if _skip_whitespace(text, position + 1) == len(text) else None
    while position < len(text):
        try:
            _, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError:
            return None
        spans.append((position, end))
        position = _skip_whitespace(text, end)
        if position < len(text) and text[position] == ",":
            position = _skip_whitespace(text, position + 1)
            continue
        if position < len(text) and text[position] == "]":
            return spans if _skip_whitespace(text, position + 1) == len(text) else None
        return None
    return None


def avro_value_to_json(value: object) -> object:
    """JSON rendering of a decoded Avro value: bytes as base64, times as ISO-8601."""
    if isinstance(value, dict):
        return {key: avro_value_to_json(item) for key, item in value.items()}
    if isinstance(value, tuple):  # fastavro's (name, value) union value: only a record keeps its name
        # (fastavro also names an enum branch when the writer refers to its type by name rather
        # than defining it there, e.g. DTS EmptyObject in afterImages but not in beforeImages)
        name, item = value
        return [name, avro_value_to_json(item)] if isinstance(item, dict) else avro_value_to_json(item)
    if isinstance(value, list):
        return [avro_value_to_json(item) for item in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def dumps(record: object) -> str:
    return json.dumps(avro_value_to_json(record), ensure_ascii=False, separators=(",", ":"))
