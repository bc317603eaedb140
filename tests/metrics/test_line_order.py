"""metrics.line_order: a run's lines in trec_eval's order, against Python's sorts."""

import numpy as np
import pyarrow as pa
import pytest

from rpdi.metrics import line_order
from rpdi.metrics.line_order import order_run, stable_order


@pytest.mark.parametrize("tie_block", [line_order.TIE_BLOCK, 1, 7, 100])
@pytest.mark.parametrize("seed", range(6))
def test_lines_are_in_pythons_order_of_topic_score_and_docno_bytes(seed, tie_block, monkeypatch):
    """Topics ascending, scores descending, equal scores by docno descending in byte order, on
    lines in no order with many ties, docnos sharing their first 8 bytes or more, multi-byte
    characters, a docno and the same with a trailing NUL, and lines of topics not evaluated (-1);
    ties broken in one stretch of lines, or in many (groups of ~85 tied lines longer than a
    stretch of 1 or 7 lines, or cut by one of 100)."""
    monkeypatch.setattr(line_order, "TIE_BLOCK", tie_block)
    rng = np.random.default_rng(seed)
    n, T = 3000, 7
    t = rng.integers(-1, T, n).astype(np.int32)
    score = rng.integers(0, 5, n).astype(float)
    prefixes = ["D1-", "clueweb09-en0000-", "é", "doc", "MARCO_D"]
    docnos = [f"{prefixes[i % 5]}{rng.integers(0, 10 ** rng.integers(1, 6))}-{i}" for i in range(n)]
    docnos[1], docnos[2] = "a", "a\x00"
    kept = np.flatnonzero(t >= 0)
    _, _, order, tie = order_run(t, np.arange(n), score, False, T, pa.array(docnos))
    by_docno = sorted(kept.tolist(), key=lambda i: docnos[i].encode(), reverse=True)
    expected = sorted(by_docno, key=lambda i: (t[i], -score[i]))
    assert kept[order].tolist() == expected
    ranked = kept[order]
    assert tie.tolist() == [bool(t[a] == t[b] and score[a] == score[b]) for a, b in zip(ranked, ranked[1:])]


def test_stable_order_is_a_stable_argsort():
    codes = np.random.default_rng(3).integers(0, 50, 10_000)
    assert stable_order(codes).tolist() == np.argsort(codes, kind="stable").tolist()
