"""Split landed files into messages, byte-exact, without interpreting them.

A file may hold JSON lines, one JSON array, or concatenated (pretty-printed)
JSON values, optionally gzip-compressed. Anything that is not JSON is still
returned as a message (one per line) so that SQL can quarantine it with a
reason: the loader never drops or rejects input. The rules, from the start of
the file (after a UTF-8 byte order mark) and after each message:

- whitespace (space, tab, CR, LF) between messages is skipped: blank lines are not messages;
- a line whose text, trailing whitespace stripped, starts with `{` and ends with `}` is one message
  (JSON lines; SQL validates it);
- else a JSON value starting there and followed by whitespace or the end of the file is one
  message (it may span lines: pretty-printed JSON);
- else the line, trailing whitespace stripped, is one message (not JSON: quarantined by SQL);
- a file that is one JSON array (nothing but whitespace around it): its elements are the messages;
- bytes that are not UTF-8 are decoded as U+FFFD and the message gets a `loader_error`.

`split_json_stream` reads a file block by block (`BLOCK_BYTES`, each block cut after a
newline), so a file of any size is split in bounded memory; a value that a block cuts
short (a pretty-printed object, a 50 MB line) grows the block until it parses or the
file ends. Lines that are one JSON object each, the bulk of every feed, are found for
a whole block at once with pyarrow and numpy; everything else goes through the JSON
scanner one message at a time. Offsets are byte offsets in the decompressed file.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import gzip
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"
_SKIP_WHITESPACE = re.compile(rb"[ \t\r\n]*")
UTF8_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
BLOCK_BYTES = 16 << 20  # measured: larger blocks split slower (fresh memory for each copy)
BATCH_MESSAGES = 50_000  # messages per Arrow batch where messages are built one by one (slow path, Avro)

# What a splitter yields: Arrow record batches of messages (not in index order across batches).
MESSAGE_COLUMNS = pa.schema(
    [
        ("message_index", pa.int64()),
        ("byte_offset", pa.int64()),
        ("message_text", pa.string()),
        ("loader_error", pa.string()),
    ]
)

_FAST, _BLANK, _SLOW = 0, 1, 2  # line classes of the vectorised pass
_MORE = -1  # a value runs past the end of the block: read on


@dataclass(frozen=True)
class Message:
    index: int  # position of the message in its file, from 0
    byte_offset: int  # byte offset in the decompressed file (record number in an Avro container)
    text: str
    loader_error: str | None = None


def open_decompressed(path: str | Path) -> BinaryIO:
    """The file's content as a stream, gunzipped if it is gzip (by its magic bytes, whatever its name)."""
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == GZIP_MAGIC:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb", buffering=0)


def read_bytes(path: str | Path) -> bytes:
    with open_decompressed(path) as stream:
        return stream.read()


class BlockReader:
    """Reads a stream into one reusable buffer, a block at a time, each block cut after its last
    newline. The caller says how much of a block it used (`consume`); the rest is kept at the
    start of the buffer and the next block continues it. The buffer grows when a single line (or
    a value the caller could not finish) fills it. Nothing may keep a view of the buffer across
    blocks: it is overwritten."""

    def __init__(self, stream: BinaryIO, block_bytes: int = BLOCK_BYTES) -> None:
        self.stream = stream
        self.buffer = bytearray(block_bytes)
        self.filled = 0  # bytes at the start of the buffer not consumed yet
        self.base = 0  # offset in the stream of buffer[0]
        self.eof = False

    def next_block(self) -> int:
        """Reads on; the block is buffer[:returned], ending after a newline unless at the end of
        the stream (0: nothing left)."""
        while True:
            if not self.eof:
                if self.filled == len(self.buffer):
                    self.buffer.extend(bytes(len(self.buffer)))
                self._fill()
            if self.eof:
                return self.filled
            cut = self.buffer.rfind(b"\n", 0, self.filled) + 1
            if cut:
                return cut

    def read_all(self) -> int:
        """Reads to the end of the stream; the rest of it is buffer[:returned]."""
        while not self.eof:
            if self.filled == len(self.buffer):
                self.buffer.extend(bytes(len(self.buffer)))
            self._fill()
        return self.filled

    def _fill(self) -> None:
        with memoryview(self.buffer) as view:
            while self.filled < len(view):
                count = self.stream.readinto(view[self.filled :])
                if not count:
                    self.eof = True
                    return
                self.filled += count

    def consume(self, count: int) -> None:
        rest = self.filled - count
        self.buffer[:rest] = self.buffer[count : self.filled]
        self.filled = rest
        self.base += count


def split_json_text(data: bytes) -> Iterator[Message]:
    """The messages of a whole file held in memory, in order (see `split_json_stream`)."""
    messages = []
    for batch in split_json_stream(io.BytesIO(data)):
        columns = batch.to_pydict()
        messages += map(
            Message,
            columns["message_index"],
            columns["byte_offset"],
            columns["message_text"],
            columns["loader_error"],
        )
    return iter(sorted(messages, key=lambda message: message.index))


def split_json_stream(stream: BinaryIO, block_bytes: int = BLOCK_BYTES) -> Iterator[pa.RecordBatch]:
    """The messages of a (decompressed) stream as record batches of `MESSAGE_COLUMNS`."""
    reader = BlockReader(stream, block_bytes)
    index = 0
    at_start = True
    while end := reader.next_block():
        start = 0
        if at_start:
            if reader.base == 0 and reader.buffer.startswith(UTF8_BOM):
                start = len(UTF8_BOM)
            first = _skip_whitespace(reader.buffer, start, end)
            if first == end and not reader.eof:  # only whitespace so far: the array test waits
                reader.consume(end)
                continue
            at_start = False
            if first < end and reader.buffer[first] == ord("["):
                # A JSON array is only known to be one (its elements the messages) once its end
                # is read, so this path reads the whole file: arrays are exports of modest size.
                # A file that turns out not to be an array is split as lines, as below.
                end = reader.read_all()
                spans = _array_spans(reader.buffer, first, end)
                if spans is not None:
                    yield from _message_batches(
                        (index + number, reader.base + begin, *_decode(reader.buffer[begin:stop]))
                        for number, (begin, stop) in enumerate(spans)
                    )
                    return
        batches, consumed, found = _split_block(reader.buffer, start, end, reader.eof, reader.base, index)
        yield from batches
        index += found
        reader.consume(consumed)


def _split_block(
    buffer: bytearray, start: int, end: int, at_eof: bool, base: int, index: int
) -> tuple[list[pa.RecordBatch], int, int]:
    """The messages of buffer[start:end] (a block ending after a newline, or at the end of the
    file): record batches, how much of the block they used (less than `end` when a value runs
    past it) and how many messages they hold. The batches never refer to `buffer`."""
    offset_type, offset_dtype = (pa.binary(), np.int32) if end < 2**31 else (pa.large_binary(), np.int64)
    with memoryview(buffer) as whole:
        block = pa.py_buffer(whole[:end])
        one = pa.Array.from_buffers(offset_type, 1, [None, pa.py_buffer(np.array([0, end], offset_dtype)), block])
        lines = pc.split_pattern(one, b"\n").values  # a copy of the block without its newlines
        del one, block
    line_count = len(lines) - 1 if end and buffer[end - 1] == ord("\n") else len(lines)
    _, offsets_buffer, data_buffer = lines.buffers()
    data_buffer = data_buffer or pa.py_buffer(b"")
    bounds = np.frombuffer(offsets_buffer, offset_dtype, line_count + 1, lines.offset * np.dtype(offset_dtype).itemsize)
    bounds = bounds.astype(np.int64)
    data = np.frombuffer(data_buffer, np.uint8) if data_buffer.size else np.zeros(1, np.uint8)
    lengths = np.diff(bounds)
    starts = bounds[:-1] + np.arange(line_count)  # each line start in the block: one newline per line before
    last = np.maximum(bounds[1:] - 1, 0)
    first_byte = data[np.minimum(bounds[:-1], len(data) - 1)]
    last_byte = data[np.minimum(last, len(data) - 1)]
    before_last = data[np.maximum(last - 1, 0)]
    fast = (lengths >= 2) & (first_byte == ord("{"))
    fast &= (last_byte == ord("}")) | ((lengths >= 3) & (last_byte == ord("\r")) & (before_last == ord("}")))
    classes = np.full(line_count, _SLOW, np.int8)
    classes[fast] = _FAST
    classes[(lengths == 0) | ((lengths == 1) & (last_byte == ord("\r")))] = _BLANK
    string_type = pa.string() if offset_dtype == np.int32 else pa.large_string()
    texts = pa.Array.from_buffers(string_type, line_count, [None, offsets_buffer, data_buffer], offset=lines.offset)
    try:
        texts.validate(full=True)  # UTF-8, in C++, without copying
    except pa.ArrowInvalid:  # lines with bytes that are not UTF-8 take the slow path, which flags them
        for number in np.flatnonzero(classes == _FAST):
            try:
                buffer[starts[number] : starts[number] + lengths[number]].decode("utf-8")
            except UnicodeDecodeError:
                classes[number] = _SLOW
    del lines, data

    slow_lines = np.flatnonzero(classes == _SLOW)
    emitted = np.zeros(line_count, bool)
    slow: list[tuple[int, str, str | None]] = []
    position = start
    consumed = end
    while (position := _skip_whitespace(buffer, position, end)) < end:
        line = int(np.searchsorted(starts, position, "right")) - 1
        if starts[line] == position and classes[line] == _FAST:
            # a run of JSON-object lines (and blank lines) up to the next other line
            following = int(np.searchsorted(slow_lines, line))
            stop = int(slow_lines[following]) if following < len(slow_lines) else line_count
            emitted[line:stop] = classes[line:stop] == _FAST
            position = int(starts[stop]) if stop < line_count else end
            continue
        step = _slow_step(buffer, position, end, at_eof)
        if step is None:
            consumed = position
            break
        message, position = step
        slow.append(message)

    fast_lines = np.flatnonzero(emitted)
    fast_texts = texts if len(fast_lines) == line_count else texts.filter(pa.array(emitted))
    if (last_byte[fast_lines] == ord("\r")).any():
        fast_texts = pc.utf8_rtrim(fast_texts, characters="\r")  # CRLF: the CR is trailing whitespace
    begins = np.concatenate([starts[fast_lines], np.array([begin for begin, _, _ in slow], np.int64)])
    numbers = np.empty(len(begins), np.int64)
    numbers[np.argsort(begins, kind="stable")] = np.arange(index, index + len(begins))
    batches = []
    if len(fast_lines):
        batches.append(
            pa.record_batch(
                [
                    pa.array(numbers[: len(fast_lines)]),
                    pa.array(begins[: len(fast_lines)] + base),
                    fast_texts.cast(pa.string()),
                    pa.nulls(len(fast_lines), pa.string()),
                ],
                schema=MESSAGE_COLUMNS,
            )
        )
    if slow:
        batches += _message_batches(
            (number, begin + base, text, error)
            for number, (begin, text, error) in zip(numbers[len(fast_lines) :].tolist(), slow, strict=True)
        )
    return batches, consumed, len(begins)


def _slow_step(
    buffer: bytearray, position: int, end: int, at_eof: bool
) -> tuple[tuple[int, str, str | None], int] | None:
    """The message at `position` (not whitespace) and where the next one may start; None when it
    may run past the end of the block."""
    line_end = buffer.find(b"\n", position, end)
    if line_end < 0:
        line_end = end
    text, error = _decode(buffer[position:line_end])
    line = text.rstrip()
    if line[:1] == "{" and line[-1:] == "}":
        return (position, line, error), _skip_whitespace(buffer, line_end, end)
    value_end = _value_end(buffer, position, line_end, end, at_eof)
    if value_end == _MORE:
        return None
    if value_end is not None:
        return (position, *_decode(buffer[position:value_end])), _skip_whitespace(buffer, value_end, end)
    return (position, line, error), _skip_whitespace(buffer, line_end, end)


def _value_end(buffer: bytearray, position: int, line_end: int, end: int, at_eof: bool) -> int | None:
    """End of the JSON value at `position` if one is there and whitespace (or the end of the
    file) follows it; None if not; _MORE if the block ends before the value could."""
    stop = min(line_end + 1, end)
    while True:
        text = buffer[position:stop].decode("utf-8", "surrogateescape")  # one char per bad byte
        try:
            _, chars = _DECODER.raw_decode(text)
        except json.JSONDecodeError as exc:
            # JSON strings hold no raw newline, so a value cut at a line end fails exactly at the
            # end of the text; failing before it means it is not JSON, whatever follows
            if exc.pos < len(text):
                return None
            if stop < end:  # read twice as far, to a line end
                wider = buffer.find(b"\n", min(end, position + 2 * (stop - position)), end)
                stop = end if wider < 0 else wider + 1
                continue
            return None if at_eof else _MORE
        except RecursionError:  # nested deeper than Python can follow: land it as not JSON
            return None
        if chars < len(text) and text[chars] not in _WHITESPACE:
            return None
        return position + (chars if text.isascii() else len(text[:chars].encode("utf-8", "surrogateescape")))


def _decode(data: bytes | bytearray) -> tuple[str, str | None]:
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return data.decode("utf-8", "replace"), f"invalid UTF-8 at byte {exc.start} of the message"


def _skip_whitespace(buffer: bytearray, position: int, end: int) -> int:
    return _SKIP_WHITESPACE.match(buffer, position, end).end()  # type: ignore[union-attr]


def _array_spans(buffer: bytearray, position: int, end: int) -> list[tuple[int, int]] | None:
    """Byte spans of the elements of the JSON array at `position` that fills buffer[:end] (but
    for whitespace and a leading byte order mark), or None if it is not one."""
    text = buffer[:end].decode("utf-8", "surrogateescape")  # one char per bad byte
    ascii_only = text.isascii()
    char_position = position if ascii_only else len(buffer[:position].decode("utf-8", "surrogateescape"))
    spans = _array_elements(text, char_position)
    if spans is None or ascii_only:
        return spans
    byte_spans = []
    chars = bytes_done = 0
    for begin, stop in spans:
        bytes_done += len(text[chars:begin].encode("utf-8", "surrogateescape"))
        length = len(text[begin:stop].encode("utf-8", "surrogateescape"))
        byte_spans.append((bytes_done, bytes_done + length))
        bytes_done += length
        chars = stop
    return byte_spans


def _text_skip_whitespace(text: str, position: int) -> int:
    length = len(text)
    while position < length and text[position] in _WHITESPACE:
        position += 1
    return position


def _array_elements(text: str, position: int) -> list[tuple[int, int]] | None:
    """Spans of the elements of a top-level JSON array, or None if it is not one."""
    spans: list[tuple[int, int]] = []
    position = _text_skip_whitespace(text, position + 1)
    if position < len(text) and text[position] == "]":
        return spans if _text_skip_whitespace(text, position + 1) == len(text) else None
    while position < len(text):
        try:
            _, end = _DECODER.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):
            return None
        spans.append((position, end))
        position = _text_skip_whitespace(text, end)
        if position < len(text) and text[position] == ",":
            position = _text_skip_whitespace(text, position + 1)
            continue
        if position < len(text) and text[position] == "]":
            return spans if _text_skip_whitespace(text, position + 1) == len(text) else None
        return None
    return None


def _message_batches(
    messages: Iterable[tuple[int, int, str, str | None]], size: int = BATCH_MESSAGES
) -> Iterator[pa.RecordBatch]:
    """(index, byte offset, text, loader error) tuples as record batches of `size` messages."""
    chunk: list[tuple[int, int, str, str | None]] = []
    for message in messages:
        chunk.append(message)
        if len(chunk) == size:
            yield _record_batch(chunk)
            chunk = []
    if chunk:
        yield _record_batch(chunk)


def _record_batch(chunk: list[tuple[int, int, str, str | None]]) -> pa.RecordBatch:
    indexes, offsets, texts, errors = zip(*chunk, strict=True)
    return pa.record_batch(
        [
            pa.array(indexes, pa.int64()),
            pa.array(offsets, pa.int64()),
            pa.array(texts, pa.string()),
            pa.array(errors, pa.string()),
        ],
        schema=MESSAGE_COLUMNS,
    )


def message_batches(messages: Iterable[Message], size: int = BATCH_MESSAGES) -> Iterator[pa.RecordBatch]:
    """Messages as record batches of `MESSAGE_COLUMNS`, `size` messages each."""
    return _message_batches(((m.index, m.byte_offset, m.text, m.loader_error) for m in messages), size)


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
