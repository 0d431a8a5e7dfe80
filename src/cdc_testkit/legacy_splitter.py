"""The whole-file splitter as the loader had it before it became a Spark job (commit 630ea9c,
`cdc_dbt_spark.messages.split_json_text`), kept verbatim as the oracle of the splitter tests.
Its offsets are character offsets in the decoded file; the loader's are byte offsets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"
UTF8_BOM = "\ufeff"


@dataclass(frozen=True)
class Message:
    index: int  # position of the message in its file, from 0
    byte_offset: int  # character offset in the decoded text (record number for Avro)
    text: str
    loader_error: str | None = None


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
