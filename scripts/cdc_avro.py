"""Avro carriers: render each Avro datum as one JSON message (Spark has no Avro reader here).

An Avro object container file carries its schema; each record becomes a message.
Values are rendered by `cdc_messages.dumps`: bytes as base64, times as ISO-8601,
decimals as strings. A file that cannot be decoded is landed as one message with a
`loader_error`, never dropped.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import fastavro
from cdc_messages import Message, dumps

AVRO_MAGIC = b"Obj\x01"


def split_avro(path: Path, data: bytes) -> Iterator[Message]:
    if data[:4] != AVRO_MAGIC:
        yield Message(
            0, 0, data[:4096].decode("utf-8", errors="replace"), f"not an Avro object container file: {path.name}"
        )
        return
    index = 0
    try:
        for index, record in enumerate(fastavro.reader(io.BytesIO(data))):
            yield Message(index, index, dumps(record))
    except Exception as exc:  # a corrupt block: keep what was read, land the rest as an error
        yield Message(index + 1, index + 1, "", f"Avro decoding stopped after record {index}: {exc}")
