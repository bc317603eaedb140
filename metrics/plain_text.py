"""Whether a TREC text file on disk can go to pyarrow's CSV reader as it is: the checks
:mod:`metrics.trec` makes on a file's bytes, made a block at a time, so that a large run is
parsed from the file (by pyarrow, a block at a time) and its bytes are never held whole.

The checks (any failing sends the file to the reader of its bytes, which says what is wrong):
plain ASCII text (no gzip, no NUL, no byte above 127), no ``#`` (a comment, or a docno holding
one) and no carriage return anywhere, one delimiter (spaces or tabs, not both), and no empty
field: a delimiter doubled, or at the start or end of a line or of the file
(:func:`has_empty_field`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

import numpy as np

SCAN_BLOCK = 1 << 24  # bytes of a file looked at a time
LONGEST_FIRST_LINE = 1 << 20  # a longer one is left to the reader of the bytes
EMPTY_FIELD_BLOCK = 1 << 20


@dataclass(frozen=True)
class Plain:
    """What the reader needs of a file that passes: its delimiter, its first line (the number of
    fields) and its last line that is not blank (a run's tag)."""

    delimiter: str
    first_line: bytes
    last_line: bytes


def plain(path: str) -> Plain | None:
    """The file at ``path`` as :class:`Plain`, or None if a check fails, it is blank, is not a
    regular file or cannot be read (the reader of its bytes then decides), or its last line
    starts in an earlier block."""
    seen: set[bytes] = set()
    first_line, head_done = b"", False
    last = last_byte = None
    last_is_first = False
    try:
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # a device, a pipe: not read here
                return None
            while block := fh.read(SCAN_BLOCK):
                if last_byte is None and block[:2] == b"\x1f\x8b":
                    return None
                if not block.isascii() or b"\x00" in block or b"#" in block or b"\r" in block:
                    return None
                seen |= {d for d in (b" ", b"\t") if d in block}
                if len(seen) > 1:
                    return None
                delimiter = next(iter(seen), None)
                across = (last_byte or b"") + block[:1]  # the last byte of the block before and this one's first
                if delimiter is not None and any(_empty_pairs(b, delimiter) for b in (across, block)):
                    return None
                if not block.isspace():
                    last, last_is_first = block, last_byte is None
                if not head_done:  # the first line, perhaps across blocks
                    cut = block.find(b"\n")
                    first_line, head_done = first_line + (block if cut < 0 else block[:cut]), cut >= 0
                    if len(first_line) > LONGEST_FIRST_LINE:
                        return None
                last_byte = block[-1:]
    except OSError:
        return None
    if last is None or not seen:
        return None
    delimiter = seen.pop()
    content = last.rstrip()
    if first_line[:1] == delimiter or last_byte == delimiter or (b"\n" not in content and not last_is_first):
        return None
    return Plain(delimiter.decode(), first_line, content[content.rfind(b"\n") + 1:])


def has_empty_field(data: bytes, delimiter: bytes) -> bool:
    """Whether a line of ``data`` has an empty field between ``delimiter`` characters (a space or
    a tab: a byte below 33, as the search assumes): the delimiter doubled, or at the start or end
    of a line or of the file (a blank line has none).

    >>> [has_empty_field(x, b" ") for x in (b"a b\\nc d\\n", b"a  b\\n", b" a\\n", b"a \\r\\nb\\n", b"a\\n\\nb\\n", b"a ")]
    [False, True, True, True, False, True]
    """
    if not data or data[:1] == delimiter or data[-1:] == delimiter:
        return bool(data)
    return _empty_pairs(data, delimiter)


def _empty_pairs(data: bytes, delimiter: bytes) -> bool:
    """Whether two neighbouring bytes of ``data`` make an empty field: the delimiter twice, or next
    to a line end (LF, or the CR of a CRLF). A pass over each block of bytes, a block and its next byte at a time (the masks of a whole file
    would cost several times its size; searching it for each two-byte pattern, three times the
    time): two neighbours at most 32 (blanks, line ends, other control bytes), rare but for CRLF
    and blank lines, are looked at again."""
    b = np.frombuffer(data, dtype=np.uint8)
    d = delimiter[0]
    for start in range(0, len(b), EMPTY_FIELD_BLOCK):
        block = b[start:start + EMPTY_FIELD_BLOCK + 1]
        low = block <= 32
        pairs = np.flatnonzero(low[:-1] & low[1:])
        first, second = block[pairs], block[pairs + 1]
        end_first = (first == 10) | (first == 13)  # LF, or the CR of a CRLF
        if (((first == d) & ((second == d) | (second == 10) | (second == 13))) | (end_first & (second == d))).any():
            return True
    return False
