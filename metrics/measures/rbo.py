"""Rank-biased overlap (Webber, Moffat & Zobel 2010) between each run and the first run given."""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.registry import MeasureSpec, persistence, register
from rpdi.metrics.view import Score, View


def rbo(v: View, p: float, extrapolate: bool) -> Score:
    """RBO between each run and the first run given, over the top min(n_a, n_b, k) documents.

    RBO@d = (1 - p) sum_{j<=d} p^(j-1) X_j / j (the lower bound); RBO_EXT adds (X_d / d) p^d,
    i.e. X_d/d p^d + (1-p)/p sum_{j<=d} X_j/j p^j. X_j is the overlap of the two top-j lists.
    Reference: Webber, Moffat & Zobel (2010); the seeds' product reference page.
    """
    docs = v.rankings.doc[:, :, : v.k]
    S, T, width = docs.shape
    depth = np.minimum(v.length, v.length[:1])  # (S, T)
    rank = np.arange(width)
    inside = rank < depth[..., None]
    # the reference's documents (its top `depth`) keyed by (topic, document), with their ranks
    n_codes = int(docs.max()) + 1
    topic = np.broadcast_to(np.arange(T)[:, None], (T, width))
    ref_ok = inside[0]
    ref_key = topic[ref_ok].astype(np.int64) * n_codes + docs[0][ref_ok]
    ref_rank = np.broadcast_to(rank, (T, width))[ref_ok]
    order = np.argsort(ref_key)
    ref_key = np.append(ref_key[order], np.iinfo(np.int64).max)  # a sentinel that never matches
    ref_rank = np.append(ref_rank[order], width)
    key = topic[None].astype(np.int64) * n_codes + docs
    pos = np.searchsorted(ref_key, key)
    matched = inside & (ref_key[pos] == key)
    partner = ref_rank[pos]
    meet = np.where(matched, np.maximum(partner, rank), width)  # 0-based depth the pair is complete
    counts = np.zeros((S, T, width + 1))
    np.add.at(counts, (np.arange(S)[:, None, None], np.arange(T)[None, :, None], meet), 1.0)
    X = np.cumsum(counts[..., :width], axis=-1)
    j = rank + 1.0
    agree = np.where(inside, X / j, 0.0)
    value = (1 - p) * (agree * p ** (j - 1)).sum(axis=-1)
    if extrapolate:
        last = np.take_along_axis(agree, np.maximum(depth - 1, 0)[..., None], axis=-1)[..., 0]
        value = value + last * p ** depth
    return Score(np.where(depth > 0, value, np.nan))


register(
    MeasureSpec("RBO", rbo, (persistence("p", "persistence of the comparison"),), "optional",
                "compares each run's ranking with the first run's", "Webber, Moffat & Zobel 2010",
                between_runs=True, extra={"extrapolate": False}),
    MeasureSpec("RBO_EXT", rbo, (persistence("p", "persistence of the comparison"),), "optional",
                "RBO extrapolated beyond the shorter list", "Webber, Moffat & Zobel 2010",
                between_runs=True, extra={"extrapolate": True}),
)
