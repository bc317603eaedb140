"""usermodels/novelty.py and ndeval's intent-aware users: alpha-DCG's, alpha-nDCG's, NRBP's and
nNRBP's users (novelty counted before the document) and ERR-IA's, nERR-IA's, P-IA's, MAP-IA's and strec's (Success-IA's) have the
exact expectations of ndeval's closed forms (metrics/measures/diversity.py, equal to pyndeval);
the greedy ideal ranking they divide by is never better than the best ranking (the declared
difference's direction), and can be worse, so the values can exceed 1."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rpdi.metrics.diversity import DiversityQrels, diversity_rankings
from rpdi.metrics.evaluate import compute
from rpdi.metrics.names import parse_measure
from rpdi.metrics.trec import run_from_dict
from rpdi.usermodels import exact, model_for
from rpdi.usermodels.novelty import GREEDY, AlphaNDCG, novelty_gains

NDEVAL = ["alpha-nDCG@10", "alpha-DCG@20", "alpha-nDCG(alpha=0.3)@5", "NRBP", "nNRBP", "nNRBP(alpha=0.2,beta=0.8)",
          "ERR-IA@20", "ERR-IA(alpha=0.3)@5", "nERR-IA@10", "nERR-IA(alpha=0.3)@20", "P-IA@10", "MAP-IA", "strec@5"]


@pytest.mark.parametrize("name", NDEVAL)
def test_exact_equals_ndevals_closed_form(diversity_collections, name):
    m, model = parse_measure(name), model_for(name)
    for rankings in diversity_collections:
        closed = compute(rankings, [m])[0].value
        value = exact(model, rankings).value
        assert np.array_equal(np.isnan(closed), np.isnan(value))
        np.testing.assert_allclose(value, closed, rtol=1e-9, atol=1e-12)


def test_novelty_is_counted_before_the_document():
    """The first document relevant to an intent is worth its full weight, the next (1 - alpha)."""
    sub = np.array([[1.0], [1.0], [0.0], [1.0]])
    assert novelty_gains(sub, np.array([1.0]), 0.5, 1.0).tolist() == [1.0, 0.5, 0.0, 0.25]


def _topic(subtopics_of: dict, ranking: list):
    """One topic "1": {docno: [intents it is relevant to]} (every intent equally likely)."""
    rows = [("1", i, d, 1.0) for d, intents in subtopics_of.items() for i in intents]
    qrels = DiversityQrels(*[[r[k] for r in rows] for k in range(3)], np.array([r[3] for r in rows]))
    return diversity_rankings(qrels, [run_from_dict("r", {"1": {d: float(len(ranking) - j)
                                                               for j, d in enumerate(ranking)}})])


def _alpha_dcg(docs: list, subtopics_of: dict, intents: list, alpha: float, k: int) -> float:
    """alpha-DCG@k from its definition (Clarke et al. 2008), rank by rank, intents equally likely."""
    seen = dict.fromkeys(intents, 0)
    total = 0.0
    for r, d in enumerate(docs[:k], start=1):
        gain = sum((1 - alpha) ** seen[i] for i in subtopics_of[d]) / len(intents)
        for i in subtopics_of[d]:
            seen[i] += 1
        total += gain / math.log2(r + 1)
    return total


def test_greedy_ideal_is_never_better_than_the_best_ranking():
    """On random small topics, the best ranking found by trying every ordering scores at least
    the greedy ideal's alpha-DCG@k, so alpha-nDCG (ndeval's and its user's) is at least alpha-DCG
    over the best ranking's: the declared difference's direction. Where greedy is worse, the best
    ranking's alpha-nDCG exceeds 1."""
    rng = np.random.default_rng(5)
    k, alpha, beaten = 3, 0.5, 0
    for _ in range(150):
        intents = ["1", "2", "3", "4", "5", "6"]
        subtopics_of = {f"d{j}": [i for i in intents if rng.random() < 0.35] or ["1"] for j in range(6)}
        used = sorted({i for s in subtopics_of.values() for i in s})
        best_order = max(itertools.permutations(subtopics_of, k),
                         key=lambda docs: _alpha_dcg(list(docs), subtopics_of, used, alpha, k))
        best = _alpha_dcg(list(best_order), subtopics_of, used, alpha, k)
        rankings = _topic(subtopics_of, list(best_order))
        # the user's expected gain on it is alpha-DCG@k from the definition (alpha-DCG divides it by
        # the all-relevant ranking's, sum_r (1 - alpha)^(r-1) / log2(r + 1))
        scale = sum((1 - alpha) ** (r - 1) / math.log2(r + 1) for r in range(1, k + 1))
        dcg = float(exact(model_for(f"alpha-DCG(alpha={alpha})@{k}"), rankings).value[0, 0])
        assert dcg * scale == pytest.approx(best, rel=1e-12)
        model = model_for(f"alpha-nDCG(alpha={alpha})@{k}")
        value = float(exact(model, rankings).value[0, 0])
        closed = float(compute(rankings, [model.measure])[0].value[0, 0])
        assert value == pytest.approx(closed, rel=1e-12)
        assert value >= 1 - 1e-12  # the best ranking over the greedy ideal's: at least 1
        beaten += value > 1 + 1e-9
    assert beaten > 0  # the greedy ideal is not the best ranking on some topics: the difference is real


def test_the_greedy_difference_is_declared_once():
    assert AlphaNDCG.declared is GREEDY and model_for("nNRBP").declared is GREEDY
    assert model_for("nERR-IA@10").declared is GREEDY
    assert "greedy" in GREEDY.why and model_for("alpha-DCG@10").declared is None
