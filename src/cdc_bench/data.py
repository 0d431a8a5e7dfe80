"""The bench's messages: one generated stream, written block by block into the full load's files,
a further 1% and the small run's."""

from __future__ import annotations

import argparse
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


def generate(args: argparse.Namespace, work: Path) -> dict[str, MessageFiles]:
    """Messages of the full load (`--events` changes, folder base), a further 1% in commit order after it
    (extra) and the small run's changes after that (small, `--small-messages` messages), with duplicates and
    displaced messages (swapped within blocks of BLOCK)."""
    total = int(args.events * 1.01)
    scenario = Scenario(
        seed=args.seed,
        tables=args.tables,
        keys=max(1, args.keys // args.tables),
        # the stream is cut below once the small run has its messages: its length only needs to suffice
        events=total + 10 * args.small_messages + 1000,
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

    files = {
        "base": MessageFiles(work / "base", args.files),
        "extra": MessageFiles(work / "extra", max(1, args.files // 100)),
        "small": MessageFiles(work / "small", 1),
    }
    block: list = []
    small_messages = 0
    for number, change in enumerate(scenario.stream(), start=1):
        block.append(change)
        if number > total:
            # whole changes (an update's two messages stay together), so about --small-messages messages
            small_messages += len(message_lines([change], args.format))
            if small_messages >= args.small_messages:
                break
            continue
        # blocks never straddle the end of the full load
        if len(block) == BLOCK or number == args.events or number == total:
            files["base" if number <= args.events else "extra"].write(len(block), render(block))
            block = []
            if number % 1_000_000 < BLOCK:
                log.info("generated %d of %d changes", number, total)
    files["small"].write(len(block), render(block))
    for messages in files.values():
        messages.close()
    return files
