"""The streaming block splitter (no Spark): the same messages as the loader's former whole-file
splitter (`legacy_splitter`), whatever the block size, in bounded memory.

The loader's offsets are byte offsets in the decompressed file; the former splitter's were
character offsets, converted here to bytes (exact for valid UTF-8 before the message).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from pathlib import Path

from cdc_dbt_spark.avro import split_avro
from cdc_dbt_spark.loader import project_formats
from cdc_dbt_spark.messages import BLOCK_BYTES, open_decompressed, split_json_stream, split_json_text
from cdc_dbt_spark.tasks import FileDigest, digest_file, split_file, task_files
from cdc_testkit.avro_files import write_dts_avro
from cdc_testkit.encoders import dts_avro
from cdc_testkit.legacy_splitter import _decode_lines
from cdc_testkit.legacy_splitter import split_json_text as legacy_split
from cdc_testkit.scenario import Change

BLOCK_SIZES = [1, 7, 64, BLOCK_BYTES]  # 1 byte: every message crosses blocks, the buffer grows


def streamed(data: bytes, block_bytes: int) -> list[tuple]:
    """(index, byte offset, text, loader_error) of every message, by the streaming splitter."""
    rows = []
    for batch in split_json_stream(io.BytesIO(data), block_bytes):
        columns = batch.to_pydict()
        rows += zip(
            columns["message_index"],
            columns["byte_offset"],
            columns["message_text"],
            columns["loader_error"],
            strict=True,
        )
    return sorted(rows)


def legacy(data: bytes) -> list[tuple]:
    """The same, by the former whole-file splitter, its character offsets as byte offsets (exact
    unless bytes that are not UTF-8 come before the message on its line)."""
    text, _ = _decode_lines(data)
    line_starts = [(0, 0)]  # (character, byte) where each line starts
    for line in data.splitlines(keepends=True):
        characters, size = line_starts[-1]
        line_starts.append((characters + len(line.decode("utf-8", "replace")), size + len(line)))
    rows = []
    for m in legacy_split(data):
        characters, size = max(start for start in line_starts if start[0] <= m.byte_offset)
        rows.append((m.index, size + len(text[characters : m.byte_offset].encode("utf-8")), m.text, m.loader_error))
    return rows


def assert_as_before(data: bytes, block_sizes: list[int] = BLOCK_SIZES) -> list[tuple]:
    expected = legacy(data)
    for block_bytes in block_sizes:
        assert streamed(data, block_bytes) == expected, f"block of {block_bytes} bytes"
    return expected


JSON_LINES = b'{"a": 1}\n{"b": "two"}\n{"c": [3]}\n'
PRETTY = json.dumps({"k": 1, "nested": {"list": [1, 2, {"deep": True}]}, "s": "x"}, indent=2).encode()


def test_json_lines() -> None:
    found = assert_as_before(JSON_LINES)
    assert found == [(0, 0, '{"a": 1}', None), (1, 9, '{"b": "two"}', None), (2, 22, '{"c": [3]}', None)]
    assert assert_as_before(JSON_LINES.rstrip(b"\n")) == found  # no newline at the end


def test_values_spanning_blocks() -> None:
    """Pretty-printed objects (and lines that look like objects inside them) cut by any block."""
    inner_object_line = b'{\n"x":\n{"a": 1}\n}\n'
    data = PRETTY + b"\n" + JSON_LINES + PRETTY + b"  " + PRETTY + b"\n" + inner_object_line + b"[1,\n 2]\n"
    found = assert_as_before(data)
    assert [text for _, _, text, _ in found] == [
        PRETTY.decode(),
        '{"a": 1}',
        '{"b": "two"}',
        '{"c": [3]}',
        PRETTY.decode(),
        PRETTY.decode(),
        '{\n"x":\n{"a": 1}\n}',
        "[1,\n 2]",
    ]


def test_concatenated_pretty_printed_json() -> None:
    data = PRETTY + PRETTY + b"\n\n" + PRETTY + b"\n"  # no whitespace between the first two
    found = assert_as_before(data)
    assert PRETTY.decode() in [text for _, _, text, _ in found]
    assert "{" in [text for _, _, text, _ in found]  # `}{`: the first line of the pair is not JSON


def test_a_50_megabyte_message() -> None:
    big = json.dumps({"blob": "x" * (50 << 20)}).encode()
    pretty_big = b'{\n  "blob": "' + b"y" * (20 << 20) + b'",\n  "n": 1\n}'
    data = JSON_LINES + big + b"\n" + pretty_big + b"\n" + JSON_LINES
    found = assert_as_before(data, [1 << 20, BLOCK_BYTES])
    assert [len(text) for _, _, text, _ in found[3:5]] == [len(big), len(pretty_big)]


def test_byte_order_mark() -> None:
    data = b"\xef\xbb\xbf" + JSON_LINES
    assert assert_as_before(data)[0] == (0, 3, '{"a": 1}', None)
    assert assert_as_before(b"\xef\xbb\xbf  \n" + PRETTY)[0][1] == 6
    # only at the start of the file: later, it is part of a (not JSON) line
    assert assert_as_before(JSON_LINES + b"\xef\xbb\xbf" + JSON_LINES)[3][2] == '\ufeff{"a": 1}'


def test_invalid_utf8_line() -> None:
    data = JSON_LINES + b'{"v": "caf\xe9"}\n\xff not json\n{"w": "\xe6\x97\xa5\xe6"}'
    found = assert_as_before(data)
    assert found[3:] == [
        (3, 33, '{"v": "caf\ufffd"}', "invalid UTF-8 at byte 10 of the message"),
        (4, 47, "\ufffd not json", "invalid UTF-8 at byte 0 of the message"),
        (5, 58, '{"w": "\u65e5\ufffd"}', "invalid UTF-8 at byte 10 of the message"),
    ]


def test_invalid_utf8_anywhere_in_a_message_is_flagged() -> None:
    """New: the former splitter flagged a message only by its first line."""
    data = b'{\n  "v": "caf\xe9"\n}\n'
    assert legacy(data)[0][3] is None
    for block_bytes in BLOCK_SIZES:
        assert streamed(data, block_bytes) == [
            (0, 0, '{\n  "v": "caf\ufffd"\n}', "invalid UTF-8 at byte 13 of the message")
        ]


def test_blank_and_whitespace_lines() -> None:
    data = b"\n\n   \n\t\n" + JSON_LINES + b"\r\n  \n\t \r\n" + b'  {"indented": 1}  \n' + b"\x0c\n" + b"  \n"
    found = assert_as_before(data)
    # blank lines are no messages; a form feed is not JSON whitespace: its line lands, empty
    assert [text for _, _, text, _ in found] == ['{"a": 1}', '{"b": "two"}', '{"c": [3]}', '{"indented": 1}', ""]
    assert assert_as_before(b"\n \r\n\t\n") == []


def test_crlf() -> None:
    data = JSON_LINES.replace(b"\n", b"\r\n") + PRETTY.replace(b"\n", b"\r\n") + b"\r\nnot json \r\n"
    found = assert_as_before(data)
    assert [text for _, _, text, _ in found][:3] == ['{"a": 1}', '{"b": "two"}', '{"c": [3]}']
    assert found[-1][2] == "not json"


def test_not_json_lines_are_messages() -> None:
    data = b'garbage\n{"a": 1} trailing\n{"a": 1}x\n1 2 3\n"s"\n{"unterminated": \n[1, 2\n'
    found = assert_as_before(data)
    assert [text for _, _, text, _ in found] == [
        "garbage",
        '{"a": 1}',  # a JSON value, then whitespace: a message; the rest of the line another
        "trailing",
        '{"a": 1}x',
        "1",
        "2",
        "3",
        '"s"',
        '{"unterminated":',
        "[1, 2",
    ]


def test_json_array() -> None:
    data = b'\xef\xbb\xbf \n[{"a": 1},\n {"b": "\xc3\xa9"} , "s", [1]]\n'
    found = assert_as_before(data[:-1] + b"\n")
    assert [text for _, _, text, _ in found] == ['{"a": 1}', '{"b": "\u00e9"}', '"s"', "[1]"]
    assert [offset for _, offset, _, _ in found] == [6, 17, 31, 36]  # bytes: é is two
    assert assert_as_before(b"[]") == []
    # not an array after all (something follows it): lines, as before
    assert [text for _, _, text, _ in assert_as_before(b'[{"a": 1}]\n{"b": 2}\n')] == ['[{"a": 1}]', '{"b": 2}']
    assert [text for _, _, text, _ in assert_as_before(b"[1, 2\n")] == ["[1, 2"]


def test_gzip(tmp_path: Path) -> None:
    data = JSON_LINES + PRETTY + b"\n" + b'{"v": "caf\xe9"}\n'
    path = tmp_path / "no_gz_suffix.json"
    path.write_bytes(gzip.compress(data[:40]) + gzip.compress(data[40:]))  # two gzip members
    with open_decompressed(path) as stream:
        assert [tuple(m.values()) for m in _rows(split_json_stream(stream, 64))] == legacy(data)
    assert digest_file(str(path)).sha256 == hashlib.sha256(data).hexdigest()


def _rows(batches) -> list[dict]:
    rows = [row for batch in batches for row in batch.to_pylist()]
    return sorted(rows, key=lambda row: row["message_index"])


def test_empty_and_zero_byte_files(tmp_path: Path) -> None:
    assert assert_as_before(b"") == []
    assert assert_as_before(b"\xef\xbb\xbf") == []
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert list(split_file(str(empty), "json")) == []
    assert digest_file(str(empty)) == FileDigest(hashlib.sha256(b"").hexdigest(), 0, 0, None)


def test_split_json_text_is_the_stream_in_order() -> None:
    data = b"x\n" + JSON_LINES + PRETTY
    messages = list(split_json_text(data))
    assert [(m.index, m.byte_offset, m.text, m.loader_error) for m in messages] == legacy(data)


def test_unreadable_files_are_reported(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.gz"
    truncated.write_bytes(gzip.compress(JSON_LINES * 100)[:-12])
    corrupt = tmp_path / "corrupt.gz"
    corrupt.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    for path in (truncated, corrupt, tmp_path / "missing.jsonl"):
        found = digest_file(str(path))
        assert found.sha256 is None and found.error, path


def test_digest_and_estimate(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(JSON_LINES * 1000 + b'{"last": 1}')
    found = digest_file(str(path))
    assert found.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (found.bytes, found.estimated_messages, found.error) == (path.stat().st_size, 3001, None)


def test_task_files_balance_and_cover() -> None:
    sizes = [100, 5, 5, 5, 5, 90, 1, 0]
    tasks = task_files(sizes, parallelism=2, task_bytes=50)
    assert sorted(number for task in tasks for number in task) == list(range(len(sizes)))
    loads = [sum(sizes[number] for number in task) for task in tasks]
    assert loads == sorted(loads, reverse=True) and loads[0] == 100  # biggest first
    assert len(task_files([10] * 20, parallelism=2, task_bytes=1000)) == 4  # two tasks a core at least
    assert len(task_files([10] * 20, parallelism=2, task_bytes=10)) == 20  # a file a task at most


T0 = 1_696_984_400_000


def test_dts_base64_lines_in_blocks_as_whole(tmp_path: Path) -> None:
    changes = [
        Change("insert", "shop", "orders", n, T0 + n, ("id",), None, {"id": n, "name": "x" * n}) for n in range(40)
    ]
    path = write_dts_avro([r for change in changes for r in dts_avro(change)], tmp_path / "dts.txt")
    path.write_bytes(path.read_bytes() + b"\nnot base64\n\n")
    settings = project_formats()["dts_avro"]
    whole = [(m.index, m.byte_offset, m.text, m.loader_error) for m in split_avro(path, path.read_bytes(), settings)]
    assert len(whole) == 41 and whole[-1][3].startswith("not a base64 Avro datum")
    for block_bytes in (100, BLOCK_BYTES):
        rows = _rows(split_file(str(path), "avro", settings, block_bytes))
        assert [tuple(row.values()) for row in rows] == whole, block_bytes


def test_avro_container_as_whole(tmp_path: Path) -> None:
    changes = [Change("insert", "shop", "orders", n, T0 + n, ("id",), None, {"id": n}) for n in range(5)]
    path = write_dts_avro([r for change in changes for r in dts_avro(change)], tmp_path / "dts.avro", container=True)
    settings = project_formats()["dts_avro"]
    whole = [(m.index, m.byte_offset, m.text, m.loader_error) for m in split_avro(path, path.read_bytes(), settings)]
    rows = _rows(split_file(str(path), "avro", settings, 64))
    assert [tuple(row.values()) for row in rows] == whole and len(whole) == 5
    assert digest_file(str(path)).estimated_messages == 5
