"""Docnos as bytes: their byte order, and a table that finds a run's docnos among the qrels'.

Both read each string of a pyarrow string array as a row of 64-bit words gathered from its data
buffer (:func:`words`); pyarrow.compute is not used (importing it would cost every start-up a
second of CPU time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DocnoTable:
    """The qrels' docnos by a 64-bit hash of their bytes: ``hashes`` (one per docno code, all
    distinct), ``words`` and ``sizes`` (their bytes as :func:`words` and their lengths, for the
    exact check) and ``table``, an open-addressing table (linear probing, at most half full) of
    the codes by hash, -1 where empty.

    >>> import pyarrow as pa
    >>> DocnoTable.of(pa.array(["d1", "d22", "é"])).codes(pa.array(["x", "é", "d1", "d1\\x00"])).tolist()
    [3, 2, 0, 6]
    """

    hashes: np.ndarray
    words: np.ndarray
    sizes: np.ndarray
    table: np.ndarray

    @classmethod
    def of(cls, strings) -> DocnoTable | None:
        """The table of the pyarrow string array ``strings``; None if a docno holds a NUL byte
        (numpy's bytes compare equal with or without trailing NULs), two hashes collide or the
        bytes would take more than SORT_BYTES."""
        offsets = string_offsets(strings)
        sizes = np.diff(offsets)
        n_words = _n_words(sizes)
        data = strings.buffers()[2]
        if len(strings) * n_words * 8 > SORT_BYTES or (data is not None and
                                                       not np.frombuffer(data, np.uint8)[offsets[0]:offsets[-1]].all()):
            return None
        matrix = words(strings, np.arange(len(strings)), n_words)
        hashes = _hash(matrix.T)
        ordered = np.sort(hashes)
        if (ordered[1:] == ordered[:-1]).any():
            return None
        del ordered
        table = np.full(1 << max(2 * len(hashes) - 1, 1).bit_length(), -1, dtype=np.int32)
        pending, slot = np.arange(len(hashes)), _slot(hashes, len(table))
        while len(pending):  # each round, each empty slot wanted takes one of its claimants; the rest move on
            empty = table[slot] < 0
            table[slot[empty]] = pending[empty]  # of several written to one slot, one stays: which, no matter
            left = table[slot] != pending
            pending, slot = pending[left], (slot[left] + 1) & (len(table) - 1)
        for array in (hashes, matrix, sizes, table):
            array.flags.writeable = False
        return cls(hashes, matrix, sizes, table)

    def codes(self, strings) -> np.ndarray:
        """The code of each entry of the pyarrow string array ``strings`` (int32, int64 from 2^31
        codes on): the index of the same docno in the table's, else the table's size + its own
        index. Its hash is looked up in the table, then the bytes are compared."""
        Nq, n_words = self.words.shape
        size = np.diff(string_offsets(strings))
        codes = np.arange(Nq, Nq + len(strings), dtype=np.int32 if Nq + len(strings) < 2 ** 31 else np.int64)
        fits = None if size.max(initial=0) <= 8 * n_words else np.flatnonzero(size <= 8 * n_words)
        if Nq and (fits is None or len(fits)):  # (a docno longer than every docno of the table is not in it)
            hit = self._probe(hashes(strings, fits, n_words))
            found = np.flatnonzero(hit >= 0)
            at, hit = (found if fits is None else fits[found]), hit[found]
            same = self.sizes[hit] == size[at]  # equal bytes, not equal but for trailing NULs
            for k, word in enumerate(_word_columns(strings, at, n_words)):
                same &= self.words[hit, k] == word
            codes[at[same]] = hit[same]
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


def hashes(strings, codes: np.ndarray | None = None, n_words: int | None = None) -> np.ndarray:
    """A uint64 hash of the bytes of each of ``strings[codes]`` (a pyarrow string array; codes
    None: all), ``n_words`` 64-bit words of them at most (default: the longest's), one word at a
    time.

    >>> import pyarrow as pa
    >>> h = hashes(pa.array(["d1", "d22", "d1", "d1\\x00"]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1]), bool(h[0] == h[3])
    (True, False, True)
    """
    if n_words is None:
        sizes = np.diff(string_offsets(strings))
        n_words = _n_words(sizes if codes is None else sizes[codes])
    return _hash(_word_columns(strings, codes, n_words))


def _hash(columns) -> np.ndarray:
    """A uint64 hash of each string given as its words, one array of them per word
    (:func:`words`): xor in each word, then multiply by an odd constant (one word: a one-to-one
    map)."""
    h = None
    for word in columns:
        h = (word if h is None else h ^ word) * np.uint64(0x9E3779B97F4A7C15)
    return h


SORT_BYTES = 1 << 27  # the largest (strings x longest string) word matrix built


def byte_order(strings, codes: np.ndarray) -> np.ndarray:
    """The order that sorts ``strings[codes]`` (a pyarrow string array) by their UTF-8 bytes.

    Each string's bytes, zero-padded (:func:`words`), are read as big-endian 64-bit words (whose
    integer order is the bytes' order) and sorted by the words, then by length (a string padded
    with NULs ties with its prefix); past ``SORT_BYTES`` as Python strings, whose code point
    order is the same.

    >>> import pyarrow as pa, numpy as np
    >>> byte_order(pa.array(["b", "ab", "a", "é", "z", "a\\x00"]), np.arange(6)).tolist()
    [2, 5, 1, 0, 4, 3]
    """
    size = np.diff(string_offsets(strings))[codes]
    n_words = _n_words(size)
    if len(codes) * n_words * 8 > SORT_BYTES:
        return np.argsort(np.array(strings.to_pylist(), dtype=object)[codes], kind="stable")
    big_endian = words(strings, codes, n_words).byteswap()  # (strings, words), the first word first
    return np.lexsort((size, *big_endian.T[::-1]))


def words(strings, codes: np.ndarray, n_words: int) -> np.ndarray:
    """The UTF-8 bytes of ``strings[codes]`` (a pyarrow string array; none longer than
    ``8 * n_words`` bytes), zero-padded, as the rows of a (codes, n_words) matrix of
    little-endian uint64 words.

    >>> import pyarrow as pa, numpy as np
    >>> words(pa.array(["ab", "", "abcdefghi"]), np.arange(3), 2).view("S8").tolist()
    [[b'ab', b''], [b'', b''], [b'abcdefgh', b'i']]
    """
    out = np.empty((len(codes), n_words), dtype="<u8")
    for k, word in enumerate(_word_columns(strings, codes, n_words)):
        out[:, k] = word
    return out


def _word_columns(strings, codes: np.ndarray | None, n_words: int):
    """The k-th little-endian uint64 word of each of ``strings[codes]`` (codes None: all),
    zero-padded, for k from 0 to ``n_words`` - 1: one array at a time.

    Each word is gathered from a view of the array's data buffer that has an (unaligned) 64-bit
    word at every byte, then its bytes past the string's end are masked off; the words that would
    reach past the buffer's end are taken from a zero-padded copy of its last bytes (a copy of the
    whole buffer would cost as much as the strings)."""
    offsets = string_offsets(strings)  # int32, as the positions below
    start = offsets[:-1] if codes is None else offsets[codes]
    size = np.diff(offsets) if codes is None else offsets[codes + 1] - start
    data = strings.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    base = max(len(data) - 8, 0)  # the last byte at which a whole word of the buffer starts
    tail = np.concatenate([data[base:], np.zeros(8 * n_words + 8, np.uint8)])
    for k in range(n_words):
        at = start + 8 * k
        if len(data) >= 8:
            near_end = np.flatnonzero(at > base)
            word = _every_word(data)[np.minimum(at, base)]
        else:
            near_end, word = np.arange(len(at)), np.empty(len(at), "<u8")
        word[near_end] = _every_word(tail)[at[near_end] - base]
        if size.min(initial=8 * k + 8) < 8 * k + 8:  # some string ends before this word does
            word &= _MASKS[np.clip(size - 8 * k, 0, 8)]
        yield word


def _every_word(data: np.ndarray) -> np.ndarray:
    """The little-endian uint64 that starts at each byte of ``data`` (but its last 7): a view."""
    return np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))


_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)  # the first r bytes of a word


def string_offsets(strings) -> np.ndarray:
    """The len + 1 int32 offsets of a pyarrow string array's entries into its data buffer, zero-copy
    (a slice's too: they point into the whole buffer)."""
    return np.frombuffer(strings.buffers()[1], dtype=np.int32, count=len(strings) + 1, offset=4 * strings.offset)


def _n_words(sizes: np.ndarray) -> int:
    """The 64-bit words that hold the longest of strings of ``sizes`` bytes (at least one)."""
    return max(-(-int(sizes.max(initial=0)) // 8), 1)
