"""Docnos as bytes: their byte order, and a table that finds a run's docnos among the qrels'.

Both read a pyarrow string array's data buffer as a zero-padded (strings, width) byte matrix;
pyarrow.compute is not used (importing it would cost every start-up a second of CPU time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpdi.metrics.trec import string_offsets


@dataclass(frozen=True)
class DocnoTable:
    """The qrels' docnos by a 64-bit hash of their bytes: ``hashes`` (one per docno code, all
    distinct), ``docnos`` (numpy bytes, for the exact check) and ``table``, an open-addressing
    table (linear probing, at most half full) of the codes by hash, -1 where empty.

    >>> import pyarrow as pa
    >>> DocnoTable.of(pa.array(["d1", "d22", "é"])).codes(pa.array(["x", "é", "d1", "d1\\x00"])).tolist()
    [3, 2, 0, 6]
    """

    hashes: np.ndarray
    docnos: np.ndarray
    table: np.ndarray

    @classmethod
    def of(cls, strings) -> DocnoTable | None:
        """The table of the pyarrow string array ``strings``; None if a docno holds a NUL byte
        (numpy's bytes compare equal with or without trailing NULs), two hashes collide or the
        bytes would take more than SORT_BYTES."""
        offsets = string_offsets(strings)
        width = -(-max(int(np.diff(offsets).max(initial=0)), 1) // 8) * 8  # whole 64-bit words
        data = strings.buffers()[2]
        if len(strings) * width > SORT_BYTES or (data is not None and
                                                 not np.frombuffer(data, np.uint8)[offsets[0]:offsets[-1]].all()):
            return None
        matrix = padded(strings, np.arange(len(strings)), width)
        hashes = _hash(matrix)
        if len(np.unique(hashes)) < len(hashes):
            return None
        table = np.full(1 << max(2 * len(hashes) - 1, 1).bit_length(), -1, dtype=np.int32)
        pending, slot = np.arange(len(hashes)), _slot(hashes, len(table))
        while len(pending):  # each round, each empty slot wanted takes its first claimant; the rest move on
            empty = table[slot] < 0
            wanted, first = np.unique(slot[empty], return_index=True)
            table[wanted] = pending[empty][first]
            left = table[slot] != pending
            pending, slot = pending[left], (slot[left] + 1) & (len(table) - 1)
        for array in (hashes, table):
            array.flags.writeable = False
        return cls(hashes, matrix.view(f"S{width}").ravel(), table)

    def codes(self, strings) -> np.ndarray:
        """The int64 code of each entry of the pyarrow string array ``strings``: the index of the
        same docno in the table's, else the table's size + its own index. Its hash is looked up
        in the table, then the bytes are compared."""
        Nq, width = len(self.hashes), self.docnos.dtype.itemsize
        size = np.diff(string_offsets(strings))
        codes = Nq + np.arange(len(strings))
        fits = np.flatnonzero(size <= width)  # longer than every docno of the table: not in it
        if len(fits) and Nq:
            matrix = padded(strings, fits, width)
            hit = self._probe(_hash(matrix))
            # equal as numpy bytes, and not by trailing NULs (the table's docnos have none)
            ends_nul = (matrix[np.arange(len(fits)), np.maximum(size[fits] - 1, 0)] == 0) & (size[fits] > 0)
            found = (hit >= 0) & ~ends_nul
            found[found] = self.docnos[hit[found]] == matrix[found].view(f"S{width}").ravel()
            codes[fits[found]] = hit[found]
        return codes

    def _probe(self, wanted: np.ndarray) -> np.ndarray:
        """The code of each of the ``wanted`` hashes, -1 if absent: from the hash's slot, the
        slots on to the first empty one, all the hashes one slot at a time."""
        found = np.full(len(wanted), -1, dtype=np.int64)
        active, slot = np.arange(len(wanted)), _slot(wanted, len(self.table))
        while len(active):
            entry = self.table[slot]
            hit = entry >= 0
            hit[hit] = self.hashes[entry[hit]] == wanted[active[hit]]
            found[active[hit]] = entry[hit]
            on = (entry >= 0) & ~hit
            active, slot = active[on], (slot[on] + 1) & (len(self.table) - 1)
        return found


def _slot(hashes: np.ndarray, size: int) -> np.ndarray:
    """The first slot of each hash in a table of ``size`` (a power of two, at least 2) slots: its top bits."""
    return (hashes >> np.uint64(65 - size.bit_length())).astype(np.int64)


def _hash(matrix: np.ndarray) -> np.ndarray:
    """A uint64 hash of each row of a (strings, 8 k) uint8 matrix: xor in each 64-bit word, then
    multiply by an odd constant (one word: a one-to-one map)."""
    h = np.zeros(len(matrix), dtype=np.uint64)
    for word in matrix.view(np.uint64).T:
        h = (h ^ word) * np.uint64(0x9E3779B97F4A7C15)
    return h


SORT_BYTES = 1 << 27  # the largest (strings x longest string) byte matrix built


def byte_order(strings, codes: np.ndarray) -> np.ndarray:
    """The order that sorts ``strings[codes]`` (a pyarrow string array) by their UTF-8 bytes.

    Each string's bytes are taken from the array's data buffer as one row of a zero-padded byte
    matrix (a window of the buffer, its bytes past the string's end set to 0), read as
    big-endian 64-bit words (whose integer order is the bytes' order) and sorted by the words,
    then by length (a string padded with NULs ties with its prefix); past ``SORT_BYTES`` as
    Python strings, whose code point order is the same. pyarrow.compute is not used: importing
    it would cost every start-up a tenth of a second.

    >>> import pyarrow as pa, numpy as np
    >>> byte_order(pa.array(["b", "ab", "a", "é", "z", "a\\x00"]), np.arange(6)).tolist()
    [2, 5, 1, 0, 4, 3]
    """
    size = np.diff(string_offsets(strings))[codes]
    width = -(-max(int(size.max()) if len(codes) else 0, 1) // 8) * 8  # whole 64-bit words
    if len(codes) * width > SORT_BYTES:
        return np.argsort(np.array(strings.to_pylist(), dtype=object)[codes], kind="stable")
    matrix = padded(strings, codes, width)
    words = matrix.view(">u8").astype(np.uint64)  # (strings, words), the first word first
    return np.lexsort((size, *words.T[::-1]))


def padded(strings, codes: np.ndarray, width: int) -> np.ndarray:
    """The UTF-8 bytes of ``strings[codes]`` (a pyarrow string array; none longer than ``width``)
    as the rows of a (codes, width) uint8 matrix, zero-padded.

    Each row is a window of the array's data buffer, its bytes past the string's end set to 0;
    the strings that start in the buffer's last ``width`` bytes are taken from a zero-padded copy
    of them (a copy of the whole buffer would cost as much as the dictionary).
    """
    offsets = string_offsets(strings)
    start, size = offsets[codes], offsets[codes + 1] - offsets[codes]
    data = strings.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    base = max(len(data) - width, 0)
    tail = np.concatenate([data[base:], np.zeros(width, np.uint8)])
    window = np.lib.stride_tricks.sliding_window_view
    matrix = window(data if len(data) >= width else tail, width)[np.minimum(start, base)]
    near_end = np.flatnonzero(start > base)
    matrix[near_end] = window(tail, width)[start[near_end] - base]
    matrix *= np.arange(width) < size[:, None]
    return matrix
