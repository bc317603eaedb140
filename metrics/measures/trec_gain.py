"""trec_eval's gain measures with no browsing model: G and binG, nDCGrel, RnDCG, and dcg and
ideal_dcg as trec_eval computes them (gains from ``level=gain`` pairs), each following trec_eval
10.0's definition (its m_*.c read as reference).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import div, ideal_gains, judged_gains, log2_discount, parse_gains
from rpdi.metrics.measures.registry import LEVEL_GAINS, REL, MeasureSpec, register
from rpdi.metrics.view import Score, View


def g_measure(v: View, level_gains: str, binary: bool = False, rel: float = 1) -> Score:
    """G = (1/sum of the ideal gains) sum_i g_i / log2(2 + C_i - S_i), S_i the gain retrieved up
    to rank i, C_i = sum_{j<=i} max(ideal gain j, 1) (the ideal's gain, at least 1 a rank);
    binG is G with gains b_i (relevant or not): the mean over the relevant documents of
    1/log2(2 + non-relevant documents above).

    No browsing model: trec_eval's experimental cross of MAP and nDCG.
    Reference: trec_eval ``G`` and ``binG`` (Buckley, 2008).

    >>> from rpdi.metrics import score
    >>> round(score("BinG", "-$", R=1), 4)
    0.6309
    """
    if binary:
        got, ideal = v.relevant(rel), (v.ideal >= rel).astype(float)
        total = v.R(rel)
    else:
        pairs = parse_gains(level_gains)
        got, ideal = judged_gains(v, pairs), ideal_gains(v, pairs)
        total = np.maximum(ideal, 0.0).sum(axis=-1)
    ideal = np.pad(ideal, ((0, 0), (0, max(0, v.k - ideal.shape[1]))))[:, :v.k]
    cost = np.cumsum(np.maximum(ideal, 1.0), axis=-1)
    seen = np.cumsum(got, axis=-1)
    terms = np.where(got != 0, div(got, np.log2(2 + cost - seen)), 0.0)
    return Score(np.nan_to_num(div(terms.sum(axis=-1), total)))


register(
    MeasureSpec("G", g_measure, (LEVEL_GAINS,), "none",
                "no browsing model: gain discounted by the ideal gain still missing", "trec_eval G",
                model=False),
    MeasureSpec("BinG", g_measure, (REL,), "none",
                "no browsing model: G with binary gains", "trec_eval binG", model=False,
                extra={"binary": True, "level_gains": ""}),
)


def _dcg_prefixes(v: View, pairs: dict, width: int):
    """Cumulative DCG of the results and of the ideal ranking at positions 0..width (prefix
    lengths), the results' frozen at their length."""
    got = judged_gains(v, pairs)
    got = np.pad(got, ((0, 0), (0, 0), (0, max(0, width - got.shape[-1]))))[..., :width]
    ideal = ideal_gains(v, pairs)
    ideal = np.pad(ideal, ((0, 0), (0, max(0, width - ideal.shape[1]))))[:, :width]
    w = log2_discount(width)
    zero = np.zeros(got.shape[:-1] + (1,))
    results = np.concatenate([zero, np.cumsum(got * w, axis=-1)], axis=-1)
    best = np.concatenate([np.zeros((ideal.shape[0], 1)), np.cumsum(np.maximum(ideal, 0) * w, axis=-1)], axis=-1)
    return got, ideal, results, best


def ndcg_rel(v: View, level_gains: str) -> Score:
    """nDCGrel = the mean of nDCG@i over the ranks i of the relevant documents retrieved, each
    relevant document not retrieved counting the nDCG of the whole ranking; the ideal DCG stops
    growing once its positive gains are used up.

    Reference: trec_eval ``ndcg_rel``.

    >>> from rpdi.metrics import score
    >>> round(score("nDCGrel", "$-$", R=2), 4)  # (1/1 + 1.5/(1 + 1/log2(3))) / 2
    0.9599
    """
    pairs = parse_gains(level_gains)
    width = max(v.k, v.ideal.shape[1])
    got, ideal, results, best = _dcg_prefixes(v, pairs, width)
    n_pos = (ideal > 0).sum(axis=-1)  # (T,)
    ratio = div(results[..., 1:], best[:, 1:])
    hits = got > 0
    total = np.where(hits, ratio, 0.0).sum(axis=-1)
    full = div(np.take_along_axis(results, v.length[..., None], axis=-1)[..., 0], best[:, -1])
    missing = n_pos - hits.sum(axis=-1)
    total = total + missing * full
    return Score(np.where(total > 0, div(total, n_pos), 0.0))


register(
    MeasureSpec("nDCGrel", ndcg_rel, (LEVEL_GAINS,), "none",
                "no browsing model: the mean nDCG at the relevant documents", "trec_eval ndcg_rel",
                model=False),
)


def r_ndcg(v: View, rel: float, level_gains: str) -> Score:
    """RnDCG = the mean of nDCG@p over the positions p where the ideal ranking's gain drops
    (for binary judgments p = R), plus the nDCG of the whole ranking when it runs more than one
    document past the ideal's positive gains (trec_eval's loop); 0 if nothing is relevant, and
    0 when no document reaches grade ``rel`` (trec_eval -l) even if lower grades have gains.

    Reference: trec_eval ``Rndcg``.

    >>> from rpdi.metrics import score
    >>> round(score("RnDCG", "-$-", R=1), 4)  # (nDCG@1 + nDCG) / 2
    0.3155
    """
    pairs = parse_gains(level_gains)
    width = max(v.k, v.ideal.shape[1]) + 1
    got, ideal, results, best = _dcg_prefixes(v, pairs, width)
    n_pos = (ideal > 0).sum(axis=-1)  # (T,)
    p = np.arange(1, width)
    drop = (ideal[:, 1:] != ideal[:, :-1]) & (p <= n_pos[:, None]) & (best[:, 1:width] > 0)  # (T, width-1)
    n = v.length[..., None]
    at = np.take_along_axis(results, np.minimum(p, n), axis=-1)  # (S, T, width-1)
    values = np.where(drop, div(at, best[:, 1:width]), 0.0).sum(axis=-1)
    count = drop.sum(axis=-1) * np.ones(values.shape)
    extra = v.length > n_pos + 1
    full = div(np.take_along_axis(results, v.length[..., None], axis=-1)[..., 0], best[:, -1])
    values = values + np.where(extra, full, 0.0)
    count = count + extra
    return Score(np.where((n_pos > 0) & (v.R(rel) > 0), np.nan_to_num(div(values, count)), 0.0))


register(
    MeasureSpec("RnDCG", r_ndcg, (REL, LEVEL_GAINS), "none",
                "no browsing model: the mean nDCG where the ideal gain drops (R for binary judgments)",
                "trec_eval Rndcg", model=False),
)


def trec_dcg(v: View, level_gains: str) -> Score:
    """dcg = sum over the whole ranking of gain(g_i) / log2(i + 1), gains trec_eval's: the grade,
    or the given ``level=gain`` pairs.

    No browsing model under this name (rpdi's DCG is the reader's). Reference: trec_eval ``dcg``.

    >>> from rpdi.metrics import score
    >>> round(score("trec_dcg(level_gains='1=3')", [1, 0, 2]), 4)  # 3 + 2 / 2
    4.0
    """
    pairs = parse_gains(level_gains)
    gains = judged_gains(v, pairs) if pairs else v.grade
    return Score((gains * log2_discount(v.k)).sum(axis=-1))


register(
    MeasureSpec("trec_dcg", trec_dcg, (LEVEL_GAINS,), "none",
                "no browsing model under this name: DCG of the whole ranking with trec_eval's level=gain "
                "gains (rpdi's DCG is the reader's)", "trec_eval dcg", model=False),
)


def trec_ideal_dcg(v: View, level_gains: str) -> Score:
    """ideal_dcg = the dcg of the best ranking of the judged documents, positive gains only.

    No browsing model: a normaliser. Reference: trec_eval ``ideal_dcg``.

    >>> from rpdi.metrics import score
    >>> round(score("trec_ideal_dcg", [0, 1], judged_grades=[2, 1, 0]), 4)  # 2 + 1 / log2(3)
    2.6309
    """
    pairs = parse_gains(level_gains)
    ideal = ideal_gains(v, pairs) if pairs else v.ideal
    best = (np.maximum(ideal, 0.0) * log2_discount(ideal.shape[1])).sum(axis=-1)  # (T,)
    return Score(np.broadcast_to(best, v.length.shape).astype(float))


register(
    MeasureSpec("trec_ideal_dcg", trec_ideal_dcg, (LEVEL_GAINS,), "none",
                "no browsing model: the DCG of the best ranking of the judged documents",
                "trec_eval ideal_dcg", model=False),
)
