"""Docnos as bytes: their byte order, and a table that finds a run's docnos among the qrels'.

Both read each string of a pyarrow string array as its own 64-bit words, gathered from the
array's data buffer (:func:`hashes`, :func:`words`): a long docno costs its own words, not every
docno's. pyarrow.compute is not used (importing it would cost every start-up a second of CPU
time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DocnoTable:
    """The qrels' docnos by a 64-bit hash of their bytes (:func:`hashes`): ``hashes``, all
    distinct and ascending, among which a docno's is found by binary search; ``order``, the
    docno code of each (None: the hashes are in code order, as a qrels file's are,
    :func:`encoded`); ``strings`` (the docnos, a pyarrow string array, for the exact check); and
    ``filter``, a bit set of the hashes' top bits (at least 16 bits a docno;
    :func:`_filter_width`): most docnos of a run are not in the qrels, and a bit that says so is
    found in a few megabytes. (An open-addressing table of the codes took 16 MiB more for 1.4 M
    docnos, and 32 MiB more to build, and found them no faster.)

    >>> import pyarrow as pa
    >>> DocnoTable.of(pa.array(["d1", "d22", "é"])).codes(pa.array(["x", "é", "d1", "d1\\x00"])).tolist()
    [3, 2, 0, 6]
    """

    hashes: np.ndarray
    order: np.ndarray | None
    strings: object
    filter: np.ndarray

    @classmethod
    def of(cls, strings, keys: np.ndarray | None = None) -> DocnoTable | None:
        """The table of the pyarrow string array ``strings`` (``keys``: their :func:`hashes`, if
        known, as a qrels file's read are: :func:`encoded`); None if two hashes collide (as two
        docnos that differ only by trailing NUL bytes do)."""
        keys = hashes(strings) if keys is None else keys
        order = None if (keys[1:] > keys[:-1]).all() else np.argsort(keys)  # (a qrels file's: in order)
        ordered = keys if order is None else keys[order]
        if order is not None and (ordered[1:] == ordered[:-1]).any():
            return None
        bits = np.zeros(1 << (_filter_width(len(keys)) - 3), dtype=np.uint8)
        for start in range(0, len(keys), JOIN_BLOCK):
            np.bitwise_or.at(bits, *_filter_bits(ordered[start:start + JOIN_BLOCK], len(keys)))
        for array in (ordered, order, bits):
            if array is not None:
                array.flags.writeable = False
        return cls(ordered, order, strings, bits)

    def codes(self, strings, known: np.ndarray | None = None) -> np.ndarray:
        """The code of each entry of the pyarrow string array ``strings`` (int32, int64 from 2^31
        codes on): the index of the same docno in the table's, else the table's size + its own
        index. Its hash (``known``: the entries' :func:`hashes`, if computed before) is looked up
        in the table, then its length and bytes are compared (:func:`equal_given_hashes`);
        :data:`JOIN_BLOCK` entries at a time, so that what the lookup needs on the way stays small."""
        Nq, n = len(self.hashes), len(strings)
        codes = np.arange(Nq, Nq + n, dtype=np.int32 if Nq + n < 2 ** 31 else np.int64)
        size, longest = _sizes(strings), int(_sizes(self.strings).max(initial=0))
        for start in range(0, n if Nq else 0, JOIN_BLOCK):
            rows = np.arange(start, min(start + JOIN_BLOCK, n))
            rows = rows[size[rows] <= longest]  # a docno longer than every docno of the table is not in it
            hit = self._probe(hashes(strings, rows) if known is None else known[rows])
            found = np.flatnonzero(hit >= 0)
            at, hit = rows[found], hit[found]
            same = equal_given_hashes(strings, at, self.strings, hit)
            codes[at[same]] = hit[same]
        return codes

    def _probe(self, wanted: np.ndarray) -> np.ndarray:
        """The code of each of the ``wanted`` hashes, -1 if absent: those the filter lets through,
        by binary search among the hashes, in ascending order of their top bits (each search
        starts where the one before ended, in memory just read: four times faster than in the
        given order for 350 k hashes among 1.4 M), sorted as one array of the top bits and the
        position packed in an integer (an argsort of the hashes costs more)."""
        found = np.full(len(wanted), -1, dtype=np.int32)
        byte, bit = _filter_bits(wanted, len(self.hashes))
        active = np.flatnonzero(self.filter[byte] & bit)
        position = (np.uint64(1) << np.uint64(max(len(wanted) - 1, 1).bit_length())) - np.uint64(1)
        packed = (wanted[active] & ~position) | active.astype(np.uint64)
        packed.sort()
        active = (packed & position).astype(np.int64)
        del packed
        candidate = wanted[active]
        at = np.minimum(np.searchsorted(self.hashes, candidate), len(self.hashes) - 1)
        hit = self.hashes[at] == candidate
        at = at[hit]
        found[active[hit]] = at if self.order is None else self.order[at]
        return found


JOIN_BLOCK = 1 << 18  # entries hashed or looked up at a time: their temporaries a few MB, in the cache (a
# quarter of 1 << 20 took 25-55 MB less at the peak of rpdi eval at 10 x 6,980 x 100 and 1 x 6,980 x 1000, in no
# more time; 1 << 16 no less)


def equal_given_hashes(strings, codes: np.ndarray, others, other_codes: np.ndarray) -> np.ndarray:
    """Whether each of ``strings[codes]`` has the bytes of ``others[other_codes]`` (pyarrow string
    arrays, perhaps the same one), pairs whose :func:`hashes` are equal (as the docno table's
    probe and :func:`encoded`'s sort find them): their lengths, then their words but the last.
    Two strings of one length whose other words are equal hash alike only if their last words
    are equal too, for the hash's last step (the word xor-ed in, the whole multiplied by an odd
    constant) is one-to-one: a string of one word is made by its length and hash.

    >>> import pyarrow as pa, numpy as np
    >>> s = pa.array(["ab", "abcdefghi", "abcdefghi", "ab\\x00"])
    >>> equal_given_hashes(s, np.array([0, 1, 0]), s, np.array([0, 2, 3])).tolist()
    [True, True, False]
    """
    size = _sizes(strings, codes)
    same = size == _sizes(others, other_codes)
    rows = np.flatnonzero(same & (size > 8))
    pairs = zip(_words_by_length(strings, codes[rows]), _words_by_length(others, other_codes[rows]))
    for k, ((at, ours), (_, theirs)) in enumerate(pairs):
        where = rows if at is None else rows[at]  # (the lengths are equal: so are the rows of each word)
        before_last = size[where] > 8 * (k + 1)
        same[where[before_last]] &= ours[before_last] == theirs[before_last]
        if not (size[where] > 8 * (k + 2)).any():  # only last words left
            break
    return same


def encoded(strings) -> tuple[object, np.ndarray | None]:
    """The pyarrow string array ``strings`` dictionary-encoded (int32 indices), its distinct
    strings in the order of their :func:`hashes`: the hashes sorted, and the strings of equal
    hashes compared; and those distinct strings' hashes (ascending), for their
    :class:`DocnoTable`. pyarrow's encoding (first seen first) and None if two strings that differ
    hash alike. For strings nearly all distinct (a qrels file's docnos), in a fraction of the time
    and memory of pyarrow's hash table.

    >>> import pyarrow as pa
    >>> e, h = encoded(pa.array(["d2", "d1", "d2", "a" * 20]))
    >>> e.dictionary.take(e.indices).to_pylist(), bool((h == hashes(e.dictionary)).all())
    (['d2', 'd1', 'd2', 'aaaaaaaaaaaaaaaaaaaa'], True)
    """
    import pyarrow as pa

    from rpdi.metrics.trec import call_function

    h = hashes(strings)
    order = np.argsort(h)
    h = h[order]
    first = np.ones(len(h), dtype=bool)
    np.not_equal(h[1:], h[:-1], out=first[1:])
    again = np.flatnonzero(~first)
    if not equal_given_hashes(strings, order[again], strings, order[again - 1]).all():
        return call_function("dictionary_encode", strings), None
    code = np.cumsum(first, dtype=np.int32) - 1
    indices = np.empty(len(h), dtype=np.int32)
    indices[order] = code
    del code
    if not first.all():  # a docno more than once (else, as nearly always in qrels, no copies)
        order, h = order[first], h[first]
    distinct = pa.Array.from_buffers(pa.int64(), len(order), [None, pa.py_buffer(order)])
    return (pa.DictionaryArray.from_arrays(pa.Array.from_buffers(pa.int32(), len(indices), [None, pa.py_buffer(indices)]),
                                           call_function("take", strings, distinct)), h)


def _filter_width(n_keys: int) -> int:
    """The top bits of a hash that a :class:`DocnoTable` of ``n_keys`` docnos filters by: a bit
    set of at least 16 bits a docno (and a byte)."""
    return max((16 * n_keys).bit_length(), 3)


def _filter_bits(hashes: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each hash's bit is in the filter of a :class:`DocnoTable` of ``n_keys`` docnos: the
    byte (its top bits but the last 3) and the bit in it (those 3)."""
    top = (hashes >> np.uint64(64 - _filter_width(n_keys))).astype(np.int64)
    return top >> 3, np.left_shift(1, top & 7).astype(np.uint8)


def hashes(strings, codes: np.ndarray | None = None) -> np.ndarray:
    """A uint64 hash of the bytes of each of ``strings[codes]`` (a pyarrow string array; codes
    None: all): over its own words (:func:`_words_by_length`), in turn, xor the word then
    multiply by an odd constant (a string of one word: a one-to-one map). Strings that differ
    only by trailing NUL bytes hash alike.

    >>> import pyarrow as pa
    >>> h = hashes(pa.array(["d1", "d22", "d1", "d1\\x00", "a" * 20, "a" * 20]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1]), bool(h[0] == h[3]), bool(h[4] == h[5])
    (True, False, True, True)
    """
    if codes is None and len(strings) > JOIN_BLOCK:  # in blocks: what the words need on the way stays small
        h = np.empty(len(strings), dtype=np.uint64)
        for start in range(0, len(strings), JOIN_BLOCK):
            h[start:start + JOIN_BLOCK] = hashes(strings.slice(start, JOIN_BLOCK))
        return h
    h = None
    for rows, word in _words_by_length(strings, codes):
        if rows is None:
            h = word * _ODD
        else:
            h[rows] = (h[rows] ^ word) * _ODD
    return h


_ODD = np.uint64(0x9E3779B97F4A7C15)
SORT_BYTES = 1 << 27  # the largest (strings x longest string) word matrix sorted


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
    size = _sizes(strings, codes)
    n_words = max(-(-int(size.max(initial=0)) // 8), 1)
    if len(codes) * n_words * 8 > SORT_BYTES:
        return np.argsort(np.array(strings.to_pylist(), dtype=object)[codes], kind="stable")
    big_endian = words(strings, codes, n_words).byteswap()  # (strings, words), the first word first
    return np.lexsort((size, *big_endian.T[::-1]))


def first_word(strings, codes: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each of ``strings[codes]`` (a pyarrow string array), zero-padded, as
    a big-endian uint64: their order is the bytes' order, but a string padded with NULs ties
    with its prefix.

    >>> import pyarrow as pa, numpy as np
    >>> first_word(pa.array(["b", "ab", "a", "abcdefghij"]), np.arange(4)).argsort().tolist()
    [2, 1, 3, 0]
    """
    return next(_words_by_length(strings, codes))[1].byteswap()


def words(strings, codes: np.ndarray, n_words: int) -> np.ndarray:
    """The UTF-8 bytes of ``strings[codes]`` (a pyarrow string array; none longer than
    ``8 * n_words`` bytes), zero-padded, as the rows of a (codes, n_words) matrix of
    little-endian uint64 words.

    >>> import pyarrow as pa, numpy as np
    >>> words(pa.array(["ab", "", "abcdefghi"]), np.arange(3), 2).view("S8").tolist()
    [[b'ab', b''], [b'', b''], [b'abcdefgh', b'i']]
    """
    out = np.zeros((len(codes), n_words), dtype="<u8")
    for k, (rows, word) in enumerate(_words_by_length(strings, codes)):
        out[slice(None) if rows is None else rows, k] = word
    return out


def _words_by_length(strings, codes: np.ndarray | None = None):
    """For k = 0, 1, ... while some string is longer than 8k bytes: which of ``strings[codes]``
    (a pyarrow string array; codes None: all) are (``rows``, indices into codes; None: all of
    them, at k = 0) and their k-th little-endian uint64 word, its bytes past the string's end
    zero: each string's own words, however long the others.

    A word is gathered from a view of the data buffer that has an (unaligned) 64-bit word at
    every byte; one that would reach past the buffer's end, from a zero-padded copy of its last
    bytes (a copy of the whole buffer would cost as much as the strings)."""
    offsets = string_offsets(strings)
    start = offsets[:-1] if codes is None else offsets[codes]
    size = np.diff(offsets) if codes is None else offsets[codes + 1] - start
    data = strings.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    if len(data) + 8 >= 2 ** 31:  # positions past int32's range
        start = start.astype(np.int64)
    base = max(len(data) - 8, 0)  # the last byte at which a whole word of the buffer starts
    tail = _every_word(np.concatenate([data[base:], np.zeros(8, np.uint8)]))
    rows, k = None, 0
    while True:
        at = start + 8 * k if rows is None else start[rows] + 8 * k
        left = size - 8 * k if rows is None else size[rows] - 8 * k  # bytes of the strings from this word on
        if len(data) >= 8:
            word = _every_word(data)[np.minimum(at, base)]
            near_end = np.flatnonzero(at > base)
        else:
            word, near_end = np.empty(len(at), "<u8"), np.arange(len(at))
        word[near_end] = tail[at[near_end] - base]
        if len(left) and left.min() < 8:
            word &= _MASKS[np.minimum(left, 8)]
        yield rows, word
        longer = np.flatnonzero(left > 8)
        if not len(longer):
            return
        rows, k = (longer if rows is None else rows[longer]), k + 1


def _every_word(data: np.ndarray) -> np.ndarray:
    """The little-endian uint64 that starts at each byte of ``data`` (but its last 7): a view."""
    return np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))


_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)  # the first r bytes of a word


def string_offsets(strings) -> np.ndarray:
    """The len + 1 int32 offsets of a pyarrow string array's entries into its data buffer, zero-copy
    (a slice's too: they point into the whole buffer)."""
    return np.frombuffer(strings.buffers()[1], dtype=np.int32, count=len(strings) + 1, offset=4 * strings.offset)


def _sizes(strings, codes: np.ndarray | None = None) -> np.ndarray:
    """The byte length of each of ``strings[codes]`` (a pyarrow string array; codes None: all)."""
    offsets = string_offsets(strings)
    return np.diff(offsets) if codes is None else offsets[codes + 1] - offsets[codes]
