"""Closed forms of measures' expectations over the orders of tie groups (McSherry & Najork, ECIR
2008), and which measures are linear or monotone in the order (:mod:`metrics.ties` reads them).

Within a tie group of n documents, r of them relevant, every order is equally likely, so each
position holds a relevant document with probability r/n, and two positions of the group both
hold one with probability r(r-1)/(n(n-1)). A group at ranks a+1..a+n (a documents before it):

- P@k: E = (1/k) sum_{i<=k} r_G(i) / n_G(i), the group-mean relevance at each rank;
- DCG@k, nDCG@k: the gain at each rank is the group's mean gain (the ideal DCG does not move);
- RR@k: the first group with a relevant document holds the first one at rank a+j+1 with
  probability prod_{i<j} (n-r-i)/(n-i) * r/(n-j), so E = sum_j that / (a+j+1) over a+j+1 <= k;
- AP@k = (1/R) sum_{i<=k} b_i (b_1 + ... + b_i) / i, whose term at rank i of group G has
  expectation (r/n)(1 + c_G) + (i - a - 1) r(r-1)/(n(n-1)), over i, c_G the relevant documents
  before the group.

>>> from rpdi.metrics.evaluate import rankings_from_grades
>>> from rpdi.metrics.names import parse_measure
>>> from dataclasses import replace
>>> r = replace(rankings_from_grades([1, 0, 0, 1]), tie=np.array([[[0, 1, 1, 1]]]))
>>> round(float(closed_form(r, parse_measure("AP")).value[0, 0]), 4)  # (1 + (2/2 + 2/3 + 2/4) / 3) / 2
0.8611
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import div
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.view import Score, View

# measures linear in what the documents contribute at each rank, with weights and normalisers
# that the order does not move (the test walks the registry and checks each against brute force)
LINEAR = frozenset({
    "P", "R", "F", "Fallout", "RelP", "SetP", "SetR", "SetF", "SetRelP", "SetAP", "Rprec", "RprecMult",
    "DCG", "nDCG", "SDCG", "CG", "RBP", "trec_rbp", "trec_rbp_resid", "NumQ", "NumRet", "NumRel", "NumRelRet",
    "NumNonRelJudgedRet", "Utility", "Unj", "Judged", "trec_dcg", "trec_ideal_dcg", "RnDCG", "Accuracy",
})

# measures whose extremes over the orders of a group are its two orders sorted by grade (a more
# relevant document moving up never lowers them, or never raises them); checked against brute force
# on the test's cases and on 150 more random rankings (not BPM-Dynamic: 17 of the 150 failed;
# not TBG: sorting by grade ignores the documents' lengths, which it reads)
MONOTONE = frozenset({
    "P", "R", "F", "Fallout", "RelP", "SetP", "SetR", "SetF", "SetRelP", "SetAP", "AP", "SP", "IPrec",
    "AP11pt", "GMAP", "YAAP", "RR", "RR2", "CautiousRR", "Rprec", "RprecMult", "Success", "HIT", "Best", "DCG",
    "nDCG", "SDCG", "CG", "RBP", "BetaRBP", "RBP2", "trec_rbp", "ERR", "NERR8",
    "NERR9", "NERR10", "NERR11", "NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet", "Bpref",
    "GMBpref", "infAP", "Utility", "INST", "INSQ", "BPM", "U", "NPV", "SET", "IFT-C1", "IFT-C2", "IFT-C1-C2",
    "Compat", "G", "BinG", "trec_dcg", "trec_ideal_dcg", "nDCGrel", "RnDCG",
})


def linear(measure: Measure) -> bool:
    """The measure takes the linear path (not when it reads the ranking without its unjudged
    documents: removing them moves the positions of a group's judged ones unevenly)."""
    return measure.spec.name in LINEAR and not measure.params.get("judged_only", False)


def closed_form(rankings: Rankings, measure: Measure, compat: str = "trec_eval") -> Score | None:
    """McSherry & Najork's expectation of P, AP (and GMAP's AP), RR, DCG or nDCG over the tie orders of every
    ranking (all of them, tied or not), or None for another measure or parameters they do not
    cover (judged_only, nDCG's level_gains)."""
    name, params = measure.spec.name, measure.params
    if params.get("judged_only") or params.get("level_gains"):
        return None
    if name in ("DCG", "nDCG"):
        return measure.compute(View(_mean_gain(rankings, params["dcg"]), measure.depth, compat))
    if name not in ("P", "AP", "GMAP", "RR"):  # GMAP: AP per topic, its geometric mean over topics
        return None
    k = rankings.depth if measure.cutoff is None else int(measure.cutoff)
    b = (rankings.grade >= params["rel"]).astype(np.float64)
    start, end, r = _group_sums(rankings, b)
    n = (end - start).astype(np.float64)
    inside = (np.arange(rankings.depth) < k)
    if name == "P":
        num = (np.where(inside, div(r, n), 0.0)).sum(axis=-1)
        num = np.nan_to_num(num)
        return Score(num / k, num=num, den=np.full(num.shape, float(k)))
    if name == "RR":
        return Score(_expected_rr(b, start, n, r, k))
    rank = np.arange(1, rankings.depth + 1)
    before = np.take_along_axis(np.cumsum(b, axis=-1) - b, start, axis=-1)  # relevant above the group
    p = np.nan_to_num(div(r, n))
    pair = np.nan_to_num(div(r * (r - 1), n * (n - 1)))
    terms = np.where(inside, (p * (1 + before) + (rank - 1 - start) * pair) / rank, 0.0)
    return Score(div(terms.sum(axis=-1), View(rankings, measure.depth, compat).R(params["rel"])))


def _group_sums(rankings: Rankings, x: np.ndarray):
    """(start, end, the sum of ``x`` over each position's tie group), each (S, T, D)."""
    from rpdi.metrics.ties import tie_groups

    start, end = tie_groups(rankings)
    c = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(x, axis=-1)], axis=-1)
    return start, end, np.take_along_axis(c, end, axis=-1) - np.take_along_axis(c, start, axis=-1)


def _expected_rr(b: np.ndarray, start: np.ndarray, n: np.ndarray, r: np.ndarray, k: int) -> np.ndarray:
    """E[RR@k]: the first group holding a relevant document (at ranks a+1..a+n, r relevant) holds
    the first at rank a+j+1 with probability prod_{i<j} (n-r-i)/(n-i) * r/(n-j).

    >>> b = np.array([[[0.0, 1.0, 0.0]]])  # one group of three, one relevant: 1/3 (1 + 1/2 + 1/3)
    >>> round(float(_expected_rr(b, np.zeros((1, 1, 3), int), np.full((1, 1, 3), 3.0), np.ones((1, 1, 3)), 3)[0, 0]), 4)
    0.6111
    """
    D = b.shape[-1]
    found = b.any(axis=-1)
    first = b.argmax(axis=-1)[..., None]
    a = np.take_along_axis(start, first, axis=-1)
    n, r = (np.take_along_axis(x, first, axis=-1) for x in (n, r))
    j = np.arange(D)
    miss = np.clip((n - r - j) / np.maximum(n - j, 1), 0.0, 1.0)  # the document at offset j is not relevant
    reach = np.cumprod(np.concatenate([np.ones(a.shape), miss[..., :-1]], axis=-1), axis=-1)
    prob = reach * np.where(j < n, r / np.maximum(n - j, 1), 0.0)
    value = np.where(a + j < k, prob / (a + j + 1), 0.0).sum(axis=-1)
    return np.where(found, value, 0.0)


def _mean_gain(rankings: Rankings, dcg: str) -> Rankings:
    """The rankings with each tied document's grade replaced by the grade whose gain is its
    group's mean gain: the mean grade (gain g), or log2 of the mean of 2^g (gain 2^g - 1)."""
    from dataclasses import replace

    gain = rankings.grade if dcg == "log2" else np.exp2(rankings.grade)
    start, end, total = _group_sums(rankings, gain)
    n = end - start
    mean = np.where(n > 1, total / np.maximum(n, 1), gain)
    return replace(rankings, grade=np.where(n > 1, mean if dcg == "log2" else np.log2(mean), rankings.grade))
