"""How far a ranking agrees with the judgments, with no browsing model: Accuracy (the share of
(relevant, non-relevant) pairs ranked in order) and Compat (rank-biased overlap with an ideal
ranking), both as ir_measures defines them.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import div
from rpdi.metrics.measures.registry import REL, MeasureSpec, Param, persistence, register
from rpdi.metrics.view import Score, View


def accuracy(v: View, rel: float) -> Score:
    """Accuracy@k = 1 - (sum over relevant i of the non-relevant documents above i) / (N R_k) over
    the top min(k, n): R_k relevant documents (grade >= rel), N the others (unjudged ones count as
    non-relevant); 1 when N = 0 (no pair out of order), undefined when R_k = 0.

    No browsing model: the probability that a relevant document retrieved stands above a
    non-relevant one retrieved (a diagnostic of a ranker's training). Reference: ir_measures
    ``Accuracy``.

    >>> from rpdi.metrics import score
    >>> score("Accuracy", "-$?$")  # the relevant 2nd and 4th below 1 and 2 others: 1 - 3/(2 x 2)
    0.25
    """
    b = v.relevant(rel)
    other = (v.retrieved & (b == 0)).astype(float)
    above = np.cumsum(other, axis=-1)
    wrong = (b * above).sum(axis=-1)
    pairs = other.sum(axis=-1) * b.sum(axis=-1)
    return Score(np.where(b.sum(axis=-1) > 0, 1.0 - np.nan_to_num(div(wrong, pairs)), np.nan))


register(
    MeasureSpec("Accuracy", accuracy, (REL,), "optional",
                "no browsing model: the share of (relevant, non-relevant) retrieved pairs ranked in order",
                "ir_measures Accuracy", model=False),
)


def compat(v: View, p: float, normalize: bool) -> Score:
    """Compat = RBO_D(ranking, ideal) = sum_{d<=D} p^(d-1) X_d / d / sum_{d<=D} p^(d-1), X_d the
    documents in the top d of both, D = max(n, L); the ideal ranking holds the L documents of
    grade > 0, by grade descending, those retrieved in the ranking's order first. ``normalize``:
    over the same on the ideal ranking itself (X_d = min(d, L)); 0 when L = 0 or D = 0.

    No browsing model here: the compatibility of a ranking with the judgments (Clarke, Vtyurina
    & Smucker, TOIS 2021), an RBO user comparing it with the best ranking. Reference: ir_measures
    ``Compat``.

    >>> from rpdi.metrics import score
    >>> round(score("Compat(p=0.5)", [0, 1]), 4)  # X_1 = 0, X_2 = 1: (0.5/2)/(1.5) over (1 + 0.5/2)/(1.5)
    0.2
    """
    g = np.where(v.retrieved, v.grade, 0.0)
    L = (v.ideal > 0).sum(axis=-1)  # (T,)
    D = np.maximum(v.length, L)  # (S, T)
    width = int(max(v.k, v.ideal.shape[1])) + 1
    d = np.arange(1, width)
    S_cum = np.concatenate([[0.0], np.cumsum(p ** (d - 1) / d)])  # S(x) = sum_{d<=x} p^(d-1)/d
    # ideal position of each retrieved document of grade > 0: those of higher grade, then those
    # of its grade ranked above it
    position = np.zeros(g.shape)
    for level in np.unique(g[g > 0]):
        at = g == level
        higher = (v.ideal > level).sum(axis=-1)  # (T,)
        position += at * (higher[None, :, None] + np.cumsum(at, axis=-1))
    rank = np.arange(1, g.shape[-1] + 1)
    meet = np.maximum(rank, position).astype(int)  # from depth meet on the document is in both tops
    overlap = np.where(g > 0, S_cum[D[..., None]] - S_cum[np.minimum(meet - 1, D[..., None])], 0.0)
    score = overlap.sum(axis=-1)
    if normalize:
        ideal = _ideal_overlap(p, L, D, d)
        return Score(np.where(ideal > 0, div(score, ideal), 0.0))
    return Score(np.where(D > 0, div(score, (1 - p ** D) / (1 - p)), 0.0))


def _ideal_overlap(p: float, L: np.ndarray, D: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(S, T) sum_{d<=D} p^(d-1) min(d, L)/d: the ideal ranking's overlap with itself."""
    terms = p ** (d - 1) * np.minimum(d[None, :], L[:, None]) / d  # (T, width-1)
    cum = np.concatenate([np.zeros((len(L), 1)), np.cumsum(terms, axis=-1)], axis=-1)
    return np.take_along_axis(np.broadcast_to(cum, D.shape + cum.shape[-1:]), D[..., None], axis=-1)[..., 0]


register(
    MeasureSpec("Compat", compat, (persistence("p", "persistence of the comparison", 0.95),
                                   Param("normalize", bool, True, "over the ideal ranking's own score")),
                "none", "no browsing model here: RBO between the ranking and the ideal ranking",
                "Clarke, Vtyurina & Smucker 2021; ir_measures Compat", model=False),
)
