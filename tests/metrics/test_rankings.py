"""The docno join of metrics/rankings.py (runs sharing one dictionary look the qrels' docnos up in
it; runs with dictionaries of their own are unified) against a Python dict, and the empty-field
check of metrics/trec.py's fast reader against a line-by-line oracle."""

import numpy as np
import pytest

from rpdi.metrics.rankings import _doc_codes, build_rankings
from rpdi.metrics.trec import Qrels, Run, _has_empty_field, encode

ALPHABET = ["a", "b", "z", "0", "9", "-", "é", "\u00ff", "\U0001f600", "\x01"]


def _docnos(rng, n: int) -> list[str]:
    """n distinct docnos of varied lengths and bytes (multi-byte UTF-8 included)."""
    out = set()
    while len(out) < n:
        out.add("".join(rng.choice(ALPHABET, size=int(rng.integers(1, 12)))))
    return sorted(out, key=lambda _: rng.random())


def _oracle_codes(qrels_names: list[str], run_dictionaries: list[list[str]]) -> dict[str, int]:
    """Document codes as a dict: the qrels' dictionary's index, then each new docno in the order
    the runs' dictionaries list them."""
    code = {name: i for i, name in enumerate(qrels_names)}
    for names in run_dictionaries:
        for name in names:
            code.setdefault(name, len(code))
    return code


@pytest.mark.parametrize("seed", range(4))
def test_doc_codes_equal_a_dict_join_both_ways(seed):
    rng = np.random.default_rng(seed)
    names = _docnos(rng, 300)
    judged = [names[i] for i in rng.choice(300, size=120, replace=False)]
    lines = [names[i] for i in rng.integers(0, 300, size=500)]  # judged and unjudged, repeated
    qrels_docno = encode(judged)
    run_docno = encode(lines)
    shared, code_of, docs = _doc_codes(qrels_docno, [run_docno])  # one dictionary: looked up
    oracle = _oracle_codes(qrels_docno.dictionary.to_pylist(), [run_docno.dictionary.to_pylist()])
    assert code_of[docs[0]].tolist() == [oracle[n] for n in lines]
    assert np.array(shared.to_pylist(), dtype=object)[docs[0]].tolist() == lines
    # a second run with a dictionary of its own: unified, and the first run's codes unchanged
    other = encode([names[i] for i in rng.integers(0, 300, size=200)][::-1])
    merged, code_of2, docs2 = _doc_codes(qrels_docno, [run_docno, other])
    assert code_of2[docs2[0]].tolist() == code_of[docs[0]].tolist()
    oracle2 = _oracle_codes(qrels_docno.dictionary.to_pylist(),
                            [run_docno.dictionary.to_pylist(), other.dictionary.to_pylist()])
    assert code_of2[docs2[1]].tolist() == [oracle2[n] for n in other.to_pylist()]
    assert np.array(merged.to_pylist(), dtype=object)[docs2[1]].tolist() == other.to_pylist()


def test_rankings_of_the_lookup_equal_those_of_the_unified_join():
    """A run evaluated alone (its dictionary looked up) and beside a run with a dictionary of its
    own (unified): the same rankings, ties broken by docno bytes alike."""
    rng = np.random.default_rng(7)
    names = _docnos(rng, 400)
    topics = [str(t) for t in rng.integers(1, 6, size=400)]
    grade = rng.integers(-1, 4, size=400).astype(float)
    qrels = Qrels(topics[:250], names[:250], grade[:250])
    pick = rng.choice(400, size=300, replace=False)
    run_topics = [str(t) for t in rng.integers(1, 7, size=300)]
    run_names = [names[i] for i in pick]
    score = np.round(rng.normal(size=300), 1)  # many ties
    run = Run("a", run_topics, run_names, score)
    other = Run("b", run_topics[::-1], run_names[::-1], score[::-1])
    alone = build_rankings(qrels, [run])
    beside = build_rankings(qrels, [run, other])
    assert alone.tie is not None
    for field in ("grade", "judged", "pooled", "doc", "tie", "length"):
        assert np.array_equal(getattr(alone, field)[0], getattr(beside, field)[0]), field


def _oracle_empty_field(data: bytes, delimiter: bytes) -> bool:
    for line in data.split(b"\n"):
        line = line[:-1] if line.endswith(b"\r") else line
        if line and b"" in line.split(delimiter):
            return True
    return False


@pytest.mark.parametrize("delimiter", [b" ", b"\t"])
def test_empty_field_check_equals_a_line_by_line_scan(delimiter):
    rng = np.random.default_rng(3)
    pieces = [b"a", b"bc", delimiter, b"\n", b"\r\n"]
    found = set()
    for _ in range(3000):
        data = b"".join(rng.choice(pieces, size=int(rng.integers(1, 12)), p=[0.3, 0.2, 0.3, 0.15, 0.05]))
        expected = _oracle_empty_field(data, delimiter)
        assert _has_empty_field(data, delimiter) == expected, data
        found.add(expected)
    assert found == {True, False}
