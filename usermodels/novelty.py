"""Users interested in every intent, for whom what they have seen before is worth less:
alpha-DCG's and alpha-nDCG's (Clarke et al., SIGIR 2008), NRBP's and nNRBP's (Clarke, Kolla &
Vechtomova, ICTIR 2009), as ndeval scores them.

The user cares for intent i in proportion to P(i|q) = w_i, and a document relevant to intent i
after c_i documents relevant to i were read above it is worth (1 - alpha)^c_i for i: the gain at
rank r is

    G_r = sum_i w_i J(d_r, i) (1 - alpha)^{c_i(r-1)},  c_i(r-1) = sum_{j<r} J(d_j, i),

J(d, i) = 1 if d's grade for intent i is at least ``rel`` (ndeval's binary judgments). The
novelty is counted *before* the document (its own relevance does not discount it). The gain at
rank r depends on the ranking's prefix, not on the user's path through it (every user reads
ranks 1..r-1 before r), so the per-intent counts c_i are a prefix summary worked out once per
ranking (:func:`novelty_gains`), and the users are DCG's and RBP's, reading these gains. Beyond
the ranking, and for unjudged documents at their best (the upper end of the interval), a
document is worth sum_i w_i (relevant to every intent, none met before).

ndeval divides by the same user's value on another ranking: a ranking relevant to every intent
at every rank (G_r = (1 - alpha)^(r-1): alpha-DCG, NRBP, "collection independent"), or its
greedy ideal ranking (alpha-nDCG, nNRBP). The greedy ideal is the declared difference
(:data:`GREEDY`): the best ranking is NP-hard to find, the greedy one's value is at most the
best one's, so these users' values, as ndeval's, are at least the value over the best ranking's
(and can exceed 1). The normaliser's gains are the closed form's own
(:func:`metrics.measures.diversity.greedy_ideal`); the user's gains on the run are not.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.view import View
from rpdi.usermodels.base import BrowsingModel, Declared, geometric
from rpdi.usermodels.logdiscount import SDCG


def novelty_gains(sub: np.ndarray, w: np.ndarray, alpha: float, rel: float) -> np.ndarray:
    """(..., D) novelty-discounted gains of documents in rank order from their (..., D, I)
    intent grades and the intents' weights ``w`` (broadcasting against (..., I)): at rank r,
    sum_i w_i J_ri (1 - alpha)^c_i, c_i the documents of ranks 1..r-1 relevant to i.

    >>> sub = np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])  # intents 1 and 2, each 1/2
    >>> novelty_gains(sub, np.array([0.5, 0.5]), 0.5, 1.0).tolist()  # (1 + 1)/2; 0.5/2; (0.25 + 0.5)/2
    [1.0, 0.25, 0.375]
    """
    J = (sub >= rel).astype(float)
    before = np.cumsum(J, axis=-2) - J
    return (J * (1.0 - alpha) ** before * w[..., None, :]).sum(-1)


def intents_of(rankings: Rankings, what: str):
    """The rankings' intents (:class:`metrics.diversity.Intents`); InputError naming the
    measure ``what`` when the qrels were not diversity qrels."""
    intents = getattr(rankings, "intents", None)
    if intents is None:
        raise InputError(f"measure {what!r}: needs diversity qrels (topic subtopic docno judgment lines)")
    return intents


class GivenGains(Rankings):
    """Rankings whose grades are a novelty user's gains already (a normalising ranking's)."""


GREEDY = Declared("the greedy ideal: alpha-nDCG and nNRBP divide by the value of ndeval's greedy ideal ranking "
                  "(the best ranking is NP-hard to find), as the user here does; the best ranking's is at least "
                  "as large, so both are at least the value normalised by the best ranking",
                  "exact = closed form (both >= the value over the best ranking's)",
                  lambda closed, model, ranking: closed)


class _Novelty(BrowsingModel):
    """The gains of :func:`novelty_gains` on the view's rankings (see the module), normalised by
    the user's value on the greedy ideal ranking (``greedy``) or on a ranking relevant to every
    intent at every rank."""

    normalised = True
    greedy: ClassVar[bool]

    def gains(self, grade, view):
        if isinstance(view.rankings, GivenGains):
            return grade
        intents = intents_of(view.rankings, self.measure.text)
        w = intents.probabilities(self.rel)
        if grade is not view.grade:  # a document at its best: relevant to every intent, none met
            return np.broadcast_to(w.sum(-1)[None, :, None], grade.shape).astype(float)
        doc = view.rankings.doc[:, :, :view.k]
        doc = np.pad(doc, ((0, 0), (0, 0), (0, view.k - doc.shape[-1])), constant_values=-1)
        return novelty_gains(intents.grades(doc), w[None], self.alpha, self.rel)

    def ideal_rankings(self, rankings):
        from rpdi.metrics.measures.diversity import greedy_ideal, novelty_gains as closed_form_gains

        w = intents_of(rankings, self.measure.text).probabilities(self.rel)
        if self.greedy:
            g = closed_form_gains(greedy_ideal(View(rankings), self.rel, self.alpha), w, self.alpha)
        else:
            depth = self.k or self.horizon
            g = (1.0 - self.alpha) ** np.arange(depth) * w.sum(-1)[:, None]
        T, L = g.shape
        return GivenGains.of_grades(g[None], np.zeros((T, 1)), np.zeros(T, np.int64), 1.0,
                                    length=np.full((1, T), L), runs=("ideal",), topics=rankings.topics)


class AlphaNDCG(_Novelty, SDCG):
    """Reads on from rank r with probability w_{r+1}/w_r, w_r = 1/log2(r+1), up to rank k (the
    log-discount user of DCG@k), and gains the novelty gains G_r: E[G] = sum_r G_r / log2(r+1),
    divided by the same on ndeval's greedy ideal ranking = alpha-nDCG@k.

    Example: intents a (documents d1, d2) and b (d3), 1/2 each, ranking d1, d2, d3, alpha = 0.5:
    G = 1/2, 1/4, 1/2; E[G] = 1/2 + 1/4/log2(3) + 1/2/2 = 0.908.
    """

    measure_name = "alpha-nDCG"
    aggregation = "total"
    oracle = None
    declared = GREEDY
    greedy = True


class AlphaDCG(AlphaNDCG):
    """alpha-nDCG's user, divided by its value on a ranking relevant to every intent at every
    rank (G_r = (1 - alpha)^(r-1)): alpha-DCG@k, ndeval's "collection independent" one."""

    measure_name = "alpha-DCG"
    declared = None
    greedy = False


class NNRBP(_Novelty):
    """RBP's user with persistence beta (reads the first document and each next one with
    probability beta) gaining the novelty gains G_r: E[G]/E[N] = (1 - beta) sum_r beta^(r-1) G_r,
    divided by the same on ndeval's greedy ideal ranking = nNRBP.

    Example: one intent, relevant documents at ranks 1 and 2, alpha = beta = 0.5: the run is its
    own greedy ideal, nNRBP = 1.
    """

    measure_name = "nNRBP"
    aggregation = "rate"
    declared = GREEDY
    greedy = True

    def step(self, state, at):
        return geometric(self.beta, at.gain)


class NRBP(NNRBP):
    """nNRBP's user, divided by its value on a ranking relevant to every intent at every rank:
    (1 - beta) sum_r beta^(r-1) G_r over (1 - beta)/(1 - (1 - alpha) beta) = NRBP (users still
    reading at the horizon stop there, on both rankings alike)."""

    measure_name = "NRBP"
    declared = None
    greedy = False
