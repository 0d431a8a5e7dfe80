"""A scenario's messages in one format, as lines or written into files (shuffled, duplicated)."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator
from pathlib import Path

from cdc_testkit.avro_files import dts_avro_lines, write_datastream_avro
from cdc_testkit.encoders import CONTAINER_FORMATS, ENCODERS
from cdc_testkit.scenario import Change


def messages(changes: list[Change], source_format: str) -> Iterator[dict | None]:
    encoder = ENCODERS[source_format]
    for change in changes:
        yield from encoder(change)


def message_lines(changes: list[Change], source_format: str) -> list[str]:
    """Each message as one line of its carrier: JSON text, or a base64 Avro datum for dts_avro."""
    if source_format in CONTAINER_FORMATS:
        raise ValueError(f"{source_format} is written as container files, not lines: use write_stream")
    if source_format == "dts_avro":
        return dts_avro_lines(list(messages(changes, source_format)))
    return [
        json.dumps(message, ensure_ascii=False, separators=(",", ":")) for message in messages(changes, source_format)
    ]


# Kafka record keys as each vendor sets them: the row's primary key, but Canal, which sends none
UNKEYED_FORMATS = ("canal_json",)


def kafka_records(changes: list[Change], source_format: str) -> list[tuple[bytes | None, bytes | None]]:
    """The scenario's messages as Kafka records (key, value), in commit order: each value one
    message (dts_avro: a binary datum); a null value is a tombstone (Debezium's after a delete)."""
    keys: list[bytes | None] = []
    for change in changes:
        image = change.after or change.before or {}
        key = None
        if source_format not in UNKEYED_FORMATS:
            key = json.dumps({column: image.get(column) for column in change.key_columns}).encode()
        keys += [key] * len(ENCODERS[source_format](change))
    if source_format == "dts_avro":
        values = [base64.b64decode(line) for line in message_lines(changes, source_format)]
    else:
        values = [
            None if message is None else json.dumps(message).encode() for message in messages(changes, source_format)
        ]
    return list(zip(keys, values, strict=True))


def write_stream(
    changes: list[Change],
    source_format: str,
    out_dir: Path,
    files: int = 1,
    seed: int = 0,
    duplicate_share: float = 0.0,
    shuffle: bool = True,
) -> list[Path]:
    """Write the scenario's messages into `files` files, shuffled and with duplicates: lines of
    `message_lines`, or Avro container files for the container formats."""
    rng = random.Random(seed)
    if source_format in CONTAINER_FORMATS:
        events = list(messages(changes, source_format))
        events += [event for event in events if rng.random() < duplicate_share]
        if shuffle:
            rng.shuffle(events)
        paths = [out_dir / f"{source_format}-{seed}-{number:03d}.avro" for number in range(files)]
        return [write_datastream_avro(events[number::files], path) for number, path in enumerate(paths)]
    rendered = message_lines(changes, source_format)
    rendered += [text for text in rendered if rng.random() < duplicate_share]
    if shuffle:
        rng.shuffle(rendered)
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = "txt" if source_format == "dts_avro" else "jsonl"
    paths = [out_dir / f"{source_format}-{seed}-{number:03d}.{suffix}" for number in range(files)]
    handles = [path.open("w", encoding="utf-8") for path in paths]
    try:
        for number, text in enumerate(rendered):
            handles[number % files].write(text + "\n")
    finally:
        for handle in handles:
            handle.close()
    return paths
