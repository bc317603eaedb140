"""metrics/docnos.py against Python's own bytes: the words gathered from a string array's buffer,
and the table that finds a run's docnos among the qrels'."""

import numpy as np
import pyarrow as pa
import pytest

from rpdi.metrics import docnos
from rpdi.metrics.docnos import DocnoTable, hashes, words

ALPHABET = list("ab0-") + ["é", "€", "\x00"]


def random_strings(rng, most: int = 40, longest: int = 30) -> list[str]:
    """Strings that are prefixes of one another, end in NULs, hold multi-byte characters, or are
    empty, of lengths on both sides of a 64-bit word's; now and then a long one (a URL's length)."""
    return ["".join(rng.choice(ALPHABET, rng.integers(0, longest if rng.random() < 0.9 else 300)))
            for _ in range(rng.integers(1, most))]


def sliced(rng, strings: list[str]):
    """``strings`` as a pyarrow array that shares its data buffer with strings outside it, and
    the index of its first string in ``strings``."""
    start = int(rng.integers(0, len(strings)))
    return pa.array(strings, pa.string()).slice(start), start


def test_words_are_the_zero_padded_bytes_of_each_string():
    rng = np.random.default_rng(3)
    for _ in range(300):
        strings = random_strings(rng)
        array, start = sliced(rng, strings)
        codes = rng.permutation(len(array))[: rng.integers(0, len(array) + 1)]
        wanted = [strings[start + c].encode() for c in codes]
        n_words = max((-(-len(w) // 8) for w in wanted), default=1) or 1
        got = words(array, codes, n_words)
        assert got.shape == (len(codes), n_words)
        assert [row.tobytes() for row in got] == [w.ljust(8 * n_words, b"\x00") for w in wanted]


def test_a_table_finds_exactly_the_docnos_it_holds():
    """Every run docno equal in bytes to a qrels docno gets its code, every other one (a prefix,
    the same bytes and a trailing NUL, a longer string) the table's size plus its own index."""
    rng = np.random.default_rng(5)
    tables = 0
    for _ in range(300):
        qrels = list(dict.fromkeys(random_strings(rng)))
        table = DocnoTable.of(pa.array(qrels, pa.string()))
        if table is None:  # two hashes collide (two docnos but for trailing NULs): joined by unified dictionaries
            continue
        tables += 1
        run = random_strings(rng) + list(rng.choice(qrels, 5)) + [q + "\x00" for q in qrels[:3]]
        array, start = sliced(rng, run)
        position = {q.encode(): i for i, q in enumerate(qrels)}
        wanted = [position.get(run[start + i].encode(), len(qrels) + i) for i in range(len(array))]
        assert table.codes(array).tolist() == wanted
    assert tables > 250


def test_a_table_of_many_docnos_finds_them_behind_a_sparse_filter():
    """A run of many docnos, a tenth of them judged: each gets its code through the filter of the
    table's hashes, which sets at most one bit in 16 (so lets few of the others through)."""
    rng = np.random.default_rng(8)
    qrels = list(dict.fromkeys(f"D{rng.integers(10 ** 9)}" for _ in range(20_000)))
    run = [q if rng.random() < 0.1 else f"D{rng.integers(10 ** 9)}x" for q in rng.choice(qrels, 100_000)]
    table = DocnoTable.of(pa.array(qrels, pa.string()))
    position = {q: i for i, q in enumerate(qrels)}
    wanted = [position.get(d, len(qrels) + i) for i, d in enumerate(run)]
    assert table.codes(pa.array(run, pa.string())).tolist() == wanted
    assert 8 * len(table.filter) >= 16 * len(qrels)
    assert 0 < np.unpackbits(table.filter).sum() <= len(qrels)


@pytest.mark.parametrize("ends", [True, False])
def test_a_table_finds_every_hash_it_holds_and_none_between_or_beyond(ends):
    """Hashes among them both ends of uint64's range (0, 2^64 - 1), or not, are each found, given
    in order (a qrels file's, :func:`docnos.encoded`) or not (then through the codes' order); the
    hashes next to them, below the least and above the greatest, are not, in whatever order they
    are looked up."""
    rng = np.random.default_rng(11)
    keys = rng.integers(2, 2 ** 64 - 2, 300, dtype=np.uint64)
    ends_of_range = np.array([0, 1, 2 ** 64 - 2, 2 ** 64 - 1] if ends else [], dtype=np.uint64)
    keys = np.unique(np.concatenate([keys, ends_of_range]))  # (ascending)
    strings = pa.array([str(i) for i in range(len(keys))])
    near = np.concatenate([rng.integers(0, 2 ** 64, 2000, dtype=np.uint64), keys - np.uint64(1), keys + np.uint64(1)])
    absent = np.setdiff1d(near, keys)  # (wrapping past either end is absent too)
    assert ends or (absent < keys[0]).any() and (absent > keys[-1]).any()
    for given in (keys, rng.permutation(keys)):
        table = DocnoTable.of(strings, given)
        looked_up = rng.permutation(len(keys))
        assert table._probe(given[looked_up]).tolist() == looked_up.tolist()
        # (a filter that lets every hash through: only the search tells them apart)
        everything = DocnoTable(table.hashes, table.order, strings, np.full_like(table.filter, 255))
        assert (everything._probe(rng.permutation(absent)) == -1).all()


def test_hashes_of_many_strings_are_taken_a_block_at_a_time_alike(monkeypatch):
    rng = np.random.default_rng(9)
    strings = random_strings(rng, most=200) + random_strings(rng, most=200)
    array, start = sliced(rng, strings)
    one_by_one = [int(hashes(pa.array([s], pa.string()))[0]) for s in strings[start:]]
    monkeypatch.setattr(docnos, "JOIN_BLOCK", 7)
    assert hashes(array).tolist() == one_by_one


def test_docnos_that_differ_by_trailing_nuls_give_no_table():
    assert DocnoTable.of(pa.array(["a", "b", "a\x00"])) is None


def test_a_docno_holding_a_nul_is_found_exactly():
    table = DocnoTable.of(pa.array(["a", "b\x00c"]))
    assert table.codes(pa.array(["b\x00c", "b", "b\x00", "a\x00", "a"])).tolist() == [1, 3, 4, 5, 0]


def colliding() -> tuple[bytes, bytes]:
    """Two strings of 16 bytes whose first words differ and whose hashes are equal: the second's
    last word undoes the difference (the hash of the one-byte string 0x01 is the hash's odd
    constant)."""
    odd, mask = int(hashes(pa.array(["\x01"]))[0]), (1 << 64) - 1
    word = lambda b: int.from_bytes(b, "little")
    a, first = b"aaaaaaaa" + b"cccccccc", b"bbbbbbbb"
    last = word(a[8:]) ^ (word(a[:8]) * odd & mask) ^ (word(first) * odd & mask)
    return a, first + last.to_bytes(8, "little")


def raw_strings(items: list[bytes]):
    """A pyarrow string array of ``items`` as they are (not checked as UTF-8)."""
    offsets = np.cumsum([0] + [len(x) for x in items], dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), len(items), [None, pa.py_buffer(offsets.tobytes()),
                                                         pa.py_buffer(b"".join(items))])


def test_encoded_sorts_by_hash_and_falls_back_to_pyarrows_encoding_when_hashes_collide():
    """docnos.encoded sorts hashes and compares the strings of equal ones (their lengths, their
    words but the last): two docnos of one length and hash but different first words, or
    differing by a trailing NUL, get pyarrow's encoding (first seen first)."""
    values = ["d1", "d2", "d1", "x" * 20, "d2", "y"]
    by_hash, their_hashes = docnos.encoded(pa.array(values))
    assert by_hash.dictionary.take(by_hash.indices).to_pylist() == values
    assert their_hashes.tolist() == sorted(int(hashes(pa.array([s]))[0]) for s in set(values))
    a, b = colliding()
    assert a != b and len(a) == len(b) and hashes(raw_strings([a, b])).tolist() == [hashes(raw_strings([a]))[0]] * 2
    for strings in ([a, b, a, b"y"], [b"d1", b"d1\x00", b"d1"]):
        found, none = docnos.encoded(raw_strings(strings))
        assert found.dictionary.cast(pa.binary()).to_pylist() == list(dict.fromkeys(strings)) and none is None
        assert found.dictionary.take(found.indices).cast(pa.binary()).to_pylist() == strings


def test_a_table_tells_apart_docnos_of_one_length_and_hash():
    """Of two docnos with equal hashes and lengths but different first words, a table holding one
    finds it and not the other."""
    a, b = colliding()
    table = DocnoTable.of(raw_strings([b"x", a]))
    assert table.codes(raw_strings([b, a, b"x", b + b"\x00"])).tolist() == [2, 1, 0, 5]
