"""The bench's messages: one generated stream, written block by block into the full load's files,
a further 1% and the small run's."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import random
from pathlib import Path

from cdc_testkit.scenario import Scenario
from cdc_testkit.stream import message_lines

log = logging.getLogger("bench")


class MessageFiles:
    """Messages written round-robin into `files` JSON-lines files, counted with the changes they render."""

    def __init__(self, folder: Path, files: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.handles = [(folder / f"part-{number:04d}.jsonl").open("w", encoding="utf-8") for number in range(files)]
        self.changes = 0
        self.messages = 0
        self.bytes = 0

    def write(self, changes: int, texts: list[str]) -> None:
        self.changes += changes
        for text in texts:
            self.handles[self.messages % len(self.handles)].write(text + "\n")
            self.messages += 1
            self.bytes += len(text.encode()) + 1

    def close(self) -> None:
        for handle in self.handles:
            handle.close()


# changes rendered at a time: the stream is generated and written block by block, so that
# 20,000,000 events need no more memory than 2,000,000
BLOCK = 100_000

# the bench table whose schema changes in the schema_change step (cdc_bench.steps.schema_changes)
EVOLVING_TABLE = "t0"


def schema_folders(count: int) -> list[str]:
    """The schema_change step's increments: a first one, then `count` pairs of one without a schema
    change and one that adds a column to EVOLVING_TABLE (schema/NN: NN // 2 added columns)."""
    return [f"schema/{number:02d}" for number in range(1 + 2 * count)]


def with_added_columns(change, added: int):
    """`change` with columns added_1..added_N in its row images, when it is of EVOLVING_TABLE: the
    encoders declare them (a column they do not know is declared as text)."""
    if not added or change.table != EVOLVING_TABLE:
        return change
    columns = {f"added_{number}": f"v{number}" for number in range(1, added + 1)}
    return dataclasses.replace(
        change,
        before=None if change.before is None else change.before | columns,
        after=None if change.after is None else change.after | columns,
    )


def default_stream(
    source_format: str, events: int, keys: int, small_messages: int, increments: int
) -> argparse.Namespace:
    """generate's arguments for the bench's stream with its default shapes (scripts/bench.py's defaults: 10
    tables, 5 % deletes, 1 % duplicated and 5 % displaced messages, 20 files), no schema-change pairs."""
    return argparse.Namespace(
        format=source_format,
        events=events,
        keys=keys,
        tables=10,
        delete_share=0.05,
        duplicate_share=0.01,
        out_of_order_share=0.05,
        files=20,
        small_messages=small_messages,
        increments=increments,
        schema_changes=0,
        seed=1,
    )


def generate(args: argparse.Namespace, work: Path) -> dict[str, MessageFiles]:
    """Messages of the full load (`--events` changes, folder base), then, in commit order as the bench lands
    them: a further 1% (extra), `--increments` small runs (increments/NNN), the schema_change step's (schema/NN,
    see schema_folders) and the small run (small), each of `--small-messages` messages, and another 1%
    (user_increment: landed and built as a user runs them); with duplicates and displaced messages (swapped
    within blocks of BLOCK)."""
    increment = args.events // 100
    files_of_increment = max(1, args.files // 100)
    small = [
        *(f"increments/{number:03d}" for number in range(args.increments)),
        *schema_folders(args.schema_changes),
        "small",
    ]
    # (folder, files, changes or None, messages or None) in stream order
    segments = [("base", args.files, args.events, None), ("extra", files_of_increment, increment, None)]
    segments += [(name, 1, None, args.small_messages) for name in small]
    segments.append(("user_increment", files_of_increment, increment, None))
    total = args.events + 2 * increment
    scenario = Scenario(
        seed=args.seed,
        tables=args.tables,
        keys=max(1, args.keys // args.tables),
        # the small runs are cut by messages: the stream's length only needs to suffice
        events=total + 10 * args.small_messages * len(small) + 1000,
        delete_share=args.delete_share,
        key_change_share=0.0,
        truncate_every=0,
        ddl_every=0,
        heartbeat_every=1000,
        transaction_markers=False,
    )
    log.info("generating %d changes over %d keys", total, args.keys)
    rng = random.Random(args.seed)

    def render(block: list) -> list[str]:
        texts = message_lines(block, args.format)
        texts += [text for text in texts if rng.random() < args.duplicate_share]
        for _ in range(int(len(texts) * args.out_of_order_share)):
            i, j = rng.randrange(len(texts)), rng.randrange(len(texts))
            texts[i], texts[j] = texts[j], texts[i]
        return texts

    files = {name: MessageFiles(work / name, count) for name, count, _, _ in segments}
    stream = iter(scenario.stream())
    generated = 0
    for name, _, changes, messages in segments:
        block: list = []
        if changes is not None:
            # blocks of BLOCK changes, never straddling the end of a segment
            for number in range(1, changes + 1):
                block.append(next(stream))
                if len(block) == BLOCK or number == changes:
                    files[name].write(len(block), render(block))
                    block = []
                generated += 1
                if generated % 1_000_000 == 0:
                    log.info("generated %d of %d changes", generated, total)
        else:
            # whole changes (an update's two messages stay together), so about `messages` messages
            count = 0
            added = int(name.split("/")[1]) // 2 if name.startswith("schema/") else 0
            while count < messages:
                block.append(with_added_columns(next(stream), added))
                count += len(message_lines(block[-1:], args.format))
            files[name].write(len(block), render(block))
    for message_files in files.values():
        message_files.close()
    return files
