"""metrics/docnos.py against Python's own bytes: the words gathered from a string array's buffer,
and the table that finds a run's docnos among the qrels'."""

import numpy as np
import pyarrow as pa

from rpdi.metrics.docnos import DocnoTable, words

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


def test_docnos_that_differ_by_trailing_nuls_give_no_table():
    assert DocnoTable.of(pa.array(["a", "b", "a\x00"])) is None


def test_a_docno_holding_a_nul_is_found_exactly():
    table = DocnoTable.of(pa.array(["a", "b\x00c"]))
    assert table.codes(pa.array(["b\x00c", "b", "b\x00", "a\x00", "a"])).tolist() == [1, 3, 4, 5, 0]


def test_encoded_falls_back_to_pyarrows_encoding_when_hashes_collide(monkeypatch):
    """docnos.encoded sorts hashes and compares the strings of equal ones: with every hash
    reduced to one bit, strings that differ collide, and pyarrow's encoding gives the strings."""
    from rpdi.metrics import docnos

    values = ["d1", "d2", "d1", "x" * 20, "d2", "y"]
    by_hash = docnos.encoded(pa.array(values))
    assert by_hash.dictionary.take(by_hash.indices).to_pylist() == values
    hashes = docnos.hashes
    monkeypatch.setattr(docnos, "hashes", lambda strings, codes=None: hashes(strings, codes) & np.uint64(1))
    found = docnos.encoded(pa.array(values))
    assert found.dictionary.to_pylist() == ["d1", "d2", "xxxxxxxxxxxxxxxxxxxx", "y"]  # pyarrow's: first seen first
    assert found.dictionary.take(found.indices).to_pylist() == values
