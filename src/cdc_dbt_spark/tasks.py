"""What the loader runs inside Spark tasks: hash files, split files into messages.

The loader ships these callables to the executors with `DataFrame.mapInArrow`, over a
DataFrame of file numbers (one file per partition, so one task per file). They are
importable there (the package is installed in the venv the Python workers run) and hold
plain data only: file paths and the format's settings, no driver state.
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from cdc_dbt_spark.messages import (
    BLOCK_BYTES,
    BlockReader,
    Message,
    message_batches,
    open_decompressed,
    read_bytes,
    split_json_stream,
)

AVRO_MAGIC = b"Obj\x01"
HASH_SCHEMA = "file_no int, sha256 string, bytes long, estimated_messages long, error string"
SPLIT_SCHEMA = "file_no int, message_index long, byte_offset long, message_text string, loader_error string"
# Kafka records of an Avro format in (the columns of Spark's Kafka source a load keeps), messages out
RECORD_COLUMNS = ("topic", "partition", "offset", "value")
DECODED_SCHEMA = "topic string, partition int, offset long, message_text string, loader_error string"
_HASH_CHUNK = 1 << 20  # small enough to stay in cache between reading and hashing
_SAMPLE_BYTES = 4 << 20  # newlines are counted in this much of a file, then extrapolated
TASK_BYTES = 64 << 20  # files are grouped into tasks of about this many bytes


@dataclass(frozen=True)
class FileDigest:
    sha256: str | None  # of the decompressed content; None if the file could not be read
    bytes: int  # decompressed size
    estimated_messages: int  # lines (Avro container: records); for cutting batches only
    error: str | None = None


def digest_file(path: str) -> FileDigest:
    """SHA-256 and size of the decompressed content, streamed; a file that cannot be read (or
    gunzipped) is reported, not raised."""
    digest = hashlib.sha256()
    size = newlines = 0
    head = b""
    buffer = bytearray(_HASH_CHUNK)
    try:
        with open_decompressed(path) as stream, memoryview(buffer) as view:
            while count := stream.readinto(view):
                chunk = view[:count]
                digest.update(chunk)
                if size < _SAMPLE_BYTES:
                    newlines += buffer.count(b"\n", 0, count)
                    head += bytes(chunk[: 4 - len(head)])
                size += count
                last = buffer[count - 1]
        if head == AVRO_MAGIC:
            estimate = _avro_records(path)
        elif size:
            sampled = min(size, _SAMPLE_BYTES)
            estimate = max(1, round((newlines + (last != ord("\n"))) * size / sampled))
        else:
            estimate = 0
    except (OSError, EOFError, zlib.error) as exc:
        return FileDigest(None, size, 0, f"{type(exc).__name__}: {exc}")
    return FileDigest(digest.hexdigest(), size, estimate, None)


def _avro_records(path: str) -> int:
    import fastavro

    try:
        with open_decompressed(path) as stream:
            return sum(block.num_records for block in fastavro.block_reader(stream))
    except Exception:  # a corrupt container lands as an error message: count it as one
        return 1


def task_files(sizes: list[int], parallelism: int, task_bytes: int = TASK_BYTES) -> tuple[tuple[int, ...], ...]:
    """The files (numbers into `sizes`) each task takes: about `task_bytes` a task, at least two
    tasks a core while there are files, biggest first (Spark starts the tasks in order, so the
    long ones do not come last)."""
    count = min(len(sizes), max(2 * parallelism, -(-sum(sizes) // task_bytes)))
    tasks: list[list[int]] = [[] for _ in range(count)]
    loads = [0] * count
    for number in sorted(range(len(sizes)), key=lambda n: -sizes[n]):
        least = loads.index(min(loads))
        tasks[least].append(number)
        loads[least] += sizes[number]
    order = sorted(range(count), key=lambda t: -loads[t])
    return tuple(tuple(tasks[t]) for t in order)


@dataclass(frozen=True)
class HashFiles:
    """mapInArrow function over task numbers: the files of each task -> HASH_SCHEMA rows."""

    paths: tuple[str, ...]
    tasks: tuple[tuple[int, ...], ...]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = {"file_no": [], "sha256": [], "bytes": [], "estimated_messages": [], "error": []}
            for file_no in (file_no for task in batch.column(0).to_pylist() for file_no in self.tasks[task]):
                found = digest_file(self.paths[file_no])
                rows["file_no"].append(file_no)
                rows["sha256"].append(found.sha256)
                rows["bytes"].append(found.bytes)
                rows["estimated_messages"].append(found.estimated_messages)
                rows["error"].append(found.error)
            yield pa.RecordBatch.from_pydict(
                rows,
                schema=pa.schema(
                    [
                        ("file_no", pa.int32()),
                        ("sha256", pa.string()),
                        ("bytes", pa.int64()),
                        ("estimated_messages", pa.int64()),
                        ("error", pa.string()),
                    ]
                ),
            )


@dataclass(frozen=True)
class SplitFiles:
    """mapInArrow function over task numbers: every message of each file of each task -> SPLIT_SCHEMA rows."""

    paths: tuple[str, ...]
    tasks: tuple[tuple[int, ...], ...]
    carrier: str
    settings: dict[str, Any] = field(default_factory=dict)
    block_bytes: int = BLOCK_BYTES
    progress: Any = None  # a Spark accumulator of messages split, for the driver's progress log

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for file_no in (file_no for task in batch.column(0).to_pylist() for file_no in self.tasks[task]):
                for messages in split_file(self.paths[file_no], self.carrier, self.settings, self.block_bytes):
                    if self.progress is not None:
                        self.progress.add(messages.num_rows)
                    file_column = pa.array(np.full(messages.num_rows, file_no, np.int32))
                    yield pa.RecordBatch.from_arrays(
                        [file_column, *messages.columns], names=["file_no", *messages.schema.names]
                    )


@dataclass(frozen=True)
class DecodeAvroRecords:
    """mapInArrow function over Kafka records (RECORD_COLUMNS, null values left out) of an `avro`
    carrier: each record's value is one binary datum of the format's schemas, rendered as JSON
    like a base64 line of a file -> DECODED_SCHEMA rows. (Text values need no Python: the loader
    casts them in Spark.)"""

    settings: dict[str, Any] = field(default_factory=dict)
    progress: Any = None  # a Spark accumulator of records decoded, for the driver's progress log

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from cdc_dbt_spark.avro import datum_text  # only Avro formats need fastavro

        def decode(datum: bytes) -> tuple[str, str | None]:
            try:
                return datum_text(datum, self.settings), None
            except ValueError as exc:
                text = base64.b64encode(datum).decode("ascii")  # as a file would hold it
                return text, f"not an Avro datum of {self.settings['avro_schema']}: {exc}"

        for batch in batches:
            decoded = [decode(value) for value in batch.column(3).to_pylist()]
            if self.progress is not None:
                self.progress.add(batch.num_rows)
            yield pa.RecordBatch.from_arrays(
                [
                    *batch.columns[:3],
                    pa.array([text for text, _ in decoded], pa.string()),
                    pa.array([error for _, error in decoded], pa.string()),
                ],
                names=["topic", "partition", "offset", "message_text", "loader_error"],
            )


def split_file(
    path: str, carrier: str, settings: dict[str, Any] | None = None, block_bytes: int = BLOCK_BYTES
) -> Iterator[pa.RecordBatch]:
    """Every message of one file as record batches of `cdc_dbt_spark.messages.MESSAGE_COLUMNS`."""
    if carrier == "json":
        with open_decompressed(path) as stream:
            yield from split_json_stream(stream, block_bytes)
    elif carrier == "avro":
        yield from _split_avro_file(path, settings or {}, block_bytes)
    else:
        raise ValueError(f"unknown carrier {carrier!r} in dbt_project.yml")


def _split_avro_file(path: str, settings: dict[str, Any], block_bytes: int) -> Iterator[pa.RecordBatch]:
    from cdc_dbt_spark.avro import split_avro  # only Avro formats need fastavro

    with open_decompressed(path) as stream:
        reader = BlockReader(stream, block_bytes)
        end = reader.next_block()
        if reader.buffer[:4] == AVRO_MAGIC:
            # fastavro reads a container from bytes here: containers (Datastream's, DTS's) are small
            yield from message_batches(split_avro(Path(path), read_bytes(path), settings))
            return
        if not settings.get("avro_schema"):  # not Avro: one message saying so
            yield from message_batches(split_avro(Path(path), bytes(reader.buffer[:end]), settings))
            return
        # one base64 datum per line: decoded block by block, positions made file-wide
        index = 0
        while end:
            found = [
                Message(index + m.index, reader.base + m.byte_offset, m.text, m.loader_error)
                for m in split_avro(Path(path), bytes(reader.buffer[:end]), settings)
            ]
            yield from message_batches(found)
            index += len(found)
            reader.consume(end)
            end = reader.next_block()
