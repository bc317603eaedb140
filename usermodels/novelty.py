"""Users interested in every subtopic, for whom what they have seen before is worth less:
alpha-nDCG's (Clarke et al., SIGIR 2008) and NRBP's (Clarke, Kolla & Vechtomova, ICTIR 2009).

A document relevant to subtopic i after c_i documents relevant to i were read above it is worth
(1 - alpha)^c_i for i: the gain at rank k is

    g_k = sum_i J(d_k, i) (1 - alpha)^{c_i(k-1)},  c_i(k-1) = sum_{j<k} J(d_j, i),

J(d, i) = 1 if d's grade for subtopic i is at least ``rel`` (ndeval's binary judgments). The
novelty is counted *before* the document (its own relevance does not discount it). The gain at
rank k depends on the ranking's prefix, not on the user's path through it (every user reads
ranks 1..k-1 before k), so it is a deterministic function of the ranking: the per-subtopic
counts c_i are a prefix summary worked out once per ranking (:func:`novelty_gains`), and the
users are the single-subtopic users of DCG and RBP reading these gains.

Beyond the ranking, and for unjudged documents at their best (the upper end of the interval),
a document is worth the topic's number of subtopics (relevant to all, none seen before).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.rankings import Rankings
from rpdi.usermodels.base import BrowsingModel, Declared, geometric
from rpdi.usermodels.logdiscount import SDCG


def novelty_gains(sub: np.ndarray, alpha: float, rel: float) -> np.ndarray:
    """(..., D) novelty-discounted gains of documents in rank order from their (..., D, I)
    subtopic grades: at rank k, sum_i J_ki (1 - alpha)^c_i, c_i the documents of ranks 1..k-1
    relevant to i.

    >>> sub = np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])  # subtopics 1 and 2
    >>> novelty_gains(sub, 0.5, 1.0).tolist()  # 1 + 1; 0.5; 0.25 + 0.5
    [2.0, 0.5, 0.75]
    """
    J = (sub >= rel).astype(float)
    before = np.cumsum(J, axis=-2) - J
    return (J * (1.0 - alpha) ** before).sum(-1)


def intents_of(rankings: Rankings, what: str):
    """The rankings' subtopics (:class:`metrics.diversity.Intents`); InputError naming the
    measure ``what`` when the qrels were not diversity qrels."""
    intents = getattr(rankings, "intents", None)
    if intents is None:
        raise InputError(f"measure {what!r}: needs diversity qrels (topic subtopic docno judgment lines)")
    return intents


def subtopic_grades(rankings: Rankings, width: int, what: str) -> np.ndarray:
    """(S, T, width, I) every subtopic's grade (>= 0) of the first ``width`` documents of each
    ranking (0 past its end and for documents not judged for the topic)."""
    doc = rankings.doc[:, :, :width]
    doc = np.pad(doc, ((0, 0), (0, 0), (0, width - doc.shape[-1])), constant_values=-1)
    return np.maximum(intents_of(rankings, what).grades(doc), 0.0)


def greedy_ideal(rankings: Rankings, alpha: float, rel: float, depth: int) -> Rankings:
    """Each topic's greedy ideal ranking to ``depth`` (the run ``ideal``): at each rank the judged
    document of largest novelty gain given those above it, the first in document code order on
    ties (ndeval's normaliser; the best ranking is NP-hard to find, Clarke et al. 2008)."""
    from dataclasses import replace

    intents = rankings.intents
    J = (np.maximum(intents.rows, 0.0) >= rel).astype(float)  # (T, M, I)
    T, M, _ = J.shape
    real = np.arange(M) < intents.n_rows[:, None]
    width = min(depth, M)
    seen = np.zeros((T, J.shape[2]))
    taken = np.zeros((T, M), bool)
    doc = np.full((1, T, width), -1, np.int64)
    for k in range(width):
        gain = (J * (1.0 - alpha) ** seen[:, None, :]).sum(-1)
        pick = np.argmax(np.where(real & ~taken, gain, -1.0), axis=1)
        ok = (real & ~taken)[np.arange(T), pick]
        doc[0, ok, k] = intents.row_doc[ok, pick[ok]]
        taken[np.flatnonzero(ok), pick[ok]] = True
        seen[ok] += J[np.flatnonzero(ok), pick[ok]]
    length = np.minimum(intents.n_rows, width)[None].astype(np.int64)
    return replace(rankings, runs=("ideal",), grade=np.zeros((1, T, width)), judged=doc >= 0, doc=doc,
                   length=length, present=np.ones((1, T), bool), words=None, pooled=None)


class _Novelty(BrowsingModel):
    """The gains of :func:`novelty_gains` on the view's rankings (see the module)."""

    def gains(self, grade, view):
        if grade is not view.grade:  # a document at its best: relevant to every subtopic, all new
            intents = intents_of(view.rankings, self.measure.text)
            return np.broadcast_to(intents.mask.sum(-1)[None, :, None], grade.shape).astype(float)
        sub = subtopic_grades(view.rankings, grade.shape[-1], self.measure.text)
        return novelty_gains(sub, self.alpha, self.rel)

    def ideal_rankings(self, rankings):
        return greedy_ideal(rankings, self.alpha, self.rel, self.k or rankings.depth)


GREEDY = Declared("the greedy ideal: alpha-nDCG and nNRBP divide by the value of ndeval's greedy ideal ranking "
                  "(the best ranking is NP-hard to find), as the user here does; the best ranking's is at least "
                  "as large, so both are at least the value normalised by the best ranking",
                  "exact = closed form (both >= the value over the best ranking's)",
                  lambda closed, model, ranking: closed)


class AlphaNDCG(_Novelty, SDCG):
    """Reads on from rank i with probability w_{i+1}/w_i, w_i = 1/log2(i+1), up to rank k (the
    log-discount user of DCG@k), and gains the novelty-discounted g_i: E[G] = alpha-DCG@k,
    divided by the same on the greedy ideal ranking = alpha-nDCG@k (ndeval's).

    Example: subtopic sets {1, 2}, {1}, {1, 2} with alpha = 0.5 at k = 3: g = 2, 0.5, 0.75;
    E[G] = 2 + 0.5/log2(3) + 0.75/2 = 2.690.
    """

    measure_name = "alpha-nDCG"
    aggregation = "total"
    normalised = True
    oracle = None
    declared = GREEDY


class NNRBP(_Novelty):
    """RBP's user with persistence beta (reads the first document and each next one with
    probability beta) gaining the novelty-discounted g_i: E[G]/E[N] = (1 - beta) sum_i
    beta^(i-1) g_i; divided by the same on the greedy ideal ranking = nNRBP (ndeval's).

    Example: one subtopic, relevant documents at ranks 1 and 2, alpha = beta = 0.5:
    E[G]/E[N] = 0.5 (1 + 0.5 x 0.5) = 0.625, and so is the ideal's: nNRBP = 1.
    """

    measure_name = "nNRBP"
    aggregation = "rate"
    normalised = True
    declared = GREEDY

    def step(self, state, at):
        return geometric(self.beta, at.gain)
