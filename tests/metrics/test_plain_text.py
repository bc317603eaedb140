"""metrics/plain_text.py against line-by-line oracles: the empty-field check on bytes, and the
block-by-block checks that let a run file go to pyarrow's reader from disk."""

import numpy as np
import pytest

from rpdi.metrics import plain_text
from rpdi.metrics.plain_text import has_empty_field, plain
from rpdi.metrics.trec import read_run


def _oracle_empty_field(data: bytes, delimiter: bytes) -> bool:
    for line in data.split(b"\n"):
        line = line[:-1] if line.endswith(b"\r") else line
        if line and b"" in line.split(delimiter):
            return True
    return False


@pytest.mark.parametrize("delimiter", [b" ", b"\t"])
@pytest.mark.parametrize("block", [None, 3])  # the file's bytes in blocks: one, or many
def test_empty_field_check_equals_a_line_by_line_scan(delimiter, block, monkeypatch):
    if block:
        monkeypatch.setattr(plain_text, "EMPTY_FIELD_BLOCK", block)
    rng = np.random.default_rng(3)
    pieces = [b"a", b"bc", delimiter, b"\n", b"\r\n"]
    found = set()
    for _ in range(3000):
        data = b"".join(rng.choice(pieces, size=int(rng.integers(1, 12)), p=[0.3, 0.2, 0.3, 0.15, 0.05]))
        expected = _oracle_empty_field(data, delimiter)
        assert has_empty_field(data, delimiter) == expected, data
        found.add(expected)
    assert found == {True, False}


def _oracle_plain(data: bytes):
    """(delimiter, first line, last non-blank line) if the bytes pass every check, else None."""
    if data[:2] == b"\x1f\x8b" or not data.isascii() or any(c in data for c in (b"\x00", b"#", b"\r")):
        return None
    kinds = [d for d in (b" ", b"\t") if d in data]
    if len(kinds) != 1 or not data.strip() or _oracle_empty_field(data, kinds[0]):
        return None
    lines = [line for line in data.split(b"\n") if line.strip()]
    return kinds[0].decode(), data.split(b"\n")[0], lines[-1]


def _last_line_in_an_earlier_block(data: bytes, block: int) -> bool:
    """Whether the last line that is not blank starts before the last block that is not blank
    (left to the reader of the bytes)."""
    blocks = [data[i:i + block] for i in range(0, len(data), block)]
    content = [i for i, b in enumerate(blocks) if not b.isspace()]
    return bool(content) and content[-1] > 0 and b"\n" not in blocks[content[-1]].rstrip()


@pytest.mark.parametrize("block", [3, 7, 1 << 24])
def test_a_file_is_plain_exactly_when_its_bytes_pass_every_check(tmp_path, block, monkeypatch):
    """Random files of fields, spaces, tabs, line ends, blank lines, comments, CRs, NULs and a
    non-ASCII byte, scanned in blocks of a few bytes (lines across blocks) or in one."""
    monkeypatch.setattr(plain_text, "SCAN_BLOCK", block)
    rng = np.random.default_rng(11)
    pieces = [b"q1", b"d7", b" ", b"\n", b"\t", b"\n\n", b"#", b"\r\n", b"\x00", "\u00e9".encode()]
    weights = np.array([30, 30, 25, 12, 1, 2, 0.5, 0.5, 0.3, 0.3])
    outcomes = set()
    for k in range(1500):
        data = b"".join(rng.choice(pieces, size=int(rng.integers(1, 16)), p=weights / weights.sum()))
        path = tmp_path / f"f{k}.run"
        path.write_bytes(data)
        got = plain(str(path))
        expected = None if _last_line_in_an_earlier_block(data, block) else _oracle_plain(data)
        assert (None if got is None else (got.delimiter, got.first_line, got.last_line)) == expected, data
        outcomes.add(got is None)
    assert outcomes == {True, False}


def test_a_plain_run_reads_as_from_its_bytes(tmp_path, monkeypatch):
    """The same run read from disk by pyarrow and, the check made to fail, from its bytes."""
    rng = np.random.default_rng(4)
    lines = [f"{t} Q0 d{rng.integers(10 ** 6)}-{i} {i} {rng.normal():.4f} tag{t}" for t in range(5) for i in range(300)]
    path = tmp_path / "r.run"
    path.write_text("\n".join(rng.permutation(lines)) + "\n\n")
    monkeypatch.setattr(plain_text, "SCAN_BLOCK", 4096)
    from_disk = read_run(path)
    assert plain(str(path)) is not None
    monkeypatch.setattr("rpdi.metrics.trec.plain", lambda path: None)
    from_bytes = read_run(path)
    assert from_disk.tag == from_bytes.tag and from_disk.tag.startswith("tag")
    assert from_disk.score.tolist() == from_bytes.score.tolist()
    for column in ("topic", "docno"):
        assert getattr(from_disk, column).to_pylist() == getattr(from_bytes, column).to_pylist()
