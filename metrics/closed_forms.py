"""The published closed forms, vectorised over (run, topic, rank) arrays.

Each function takes a :class:`~metrics.view.View` (the rankings cut at depth k) and the
measure's parameters, and returns a :class:`~metrics.view.Score`. Notation: g_i the grade at
rank i, b_i = [g_i >= rel], R the number of judged documents with grade >= rel, n the ranking's
length, k the cutoff. Undefined values are NaN; :mod:`metrics.evaluate` reports them as 0
(trec_eval) or null. The examples use :func:`metrics.score`, which scores one grade vector.
"""

from __future__ import annotations

import math

import numpy as np

from rpdi.metrics.measures.kernels import (div, ideal_gains, judged_gains, log2_discount, parse_gains,
                                           sum_in_order)
from rpdi.metrics.measures.registry import LEVEL_GAINS, REL, MeasureSpec, Param, persistence, register
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


# trec_eval's measures that rpdi had not: counts, bpref, infAP, G, Rndcg, ... Each follows
# trec_eval 10.0's definition (the C source of its m_*.c, read as reference).

def num_ret(v: View) -> Score:
    """NumRet = the number of documents retrieved (trec_eval ``num_ret``; summed over topics).

    >>> from rpdi.metrics import score
    >>> score("NumRet", "$-?$")
    4.0
    """
    return Score(v.length.astype(float))


def num_rel(v: View, rel: float) -> Score:
    """NumRel = R, the documents judged relevant (trec_eval ``num_rel``; summed over topics).

    >>> from rpdi.metrics import score
    >>> score("NumRel", "$-$", R=5)
    5.0
    """
    return Score(np.broadcast_to(v.R(rel), v.length.shape).astype(float))


def num_rel_ret(v: View, rel: float) -> Score:
    """NumRelRet = the relevant documents retrieved (trec_eval ``num_rel_ret``).

    >>> from rpdi.metrics import score
    >>> score("NumRelRet", "$-?$")
    2.0
    """
    return Score(v.relevant(rel).sum(axis=-1))


def num_nonrel_judged_ret(v: View, rel: float) -> Score:
    """NumNonRelJudgedRet = the judged non-relevant documents retrieved
    (trec_eval ``num_nonrel_judged_ret``).

    >>> from rpdi.metrics import score
    >>> score("NumNonRelJudgedRet", "$-?-")
    2.0
    """
    return Score(((v.grade < rel) & v.judged).sum(axis=-1).astype(float))


def num_q(v: View) -> Score:
    """NumQ = 1 for every evaluated topic (trec_eval ``num_q``: summed, the number of topics).

    >>> from rpdi.metrics import score
    >>> score("NumQ", "-")
    1.0
    """
    return Score(np.ones(v.length.shape))


def bpref(v: View, rel: float) -> Score:
    """bpref = (1/R) sum over relevant retrieved r of (1 - min(n_r, R) / min(N, R)), n_r the judged
    non-relevant documents above r, N all judged non-relevant ones (a term is 1 when n_r = 0);
    unjudged documents are skipped. 0 when R = 0, as in trec_eval.

    No browsing model: bpref counts preferences between judged pairs, not a reader's gain.
    Reference: Buckley & Voorhees (SIGIR 2004); trec_eval ``bpref``.

    >>> from rpdi.metrics import score
    >>> score("Bpref", "-$?$", R=2)  # one non-relevant above both relevant, N = 1
    0.0
    """
    b = v.relevant(rel)
    nonrel = ((v.grade < rel) & v.judged).astype(float)
    above = np.cumsum(nonrel, axis=-1) - nonrel
    R = np.broadcast_to(v.R(rel), b.shape[:-1])[..., None]
    N = np.broadcast_to(v.n_judged - v.R(rel), b.shape[:-1])[..., None]
    term = np.where(above > 0, 1.0 - div(np.minimum(above, R), np.minimum(N, R)), 1.0)
    return Score(np.nan_to_num(div(sum_in_order(b * term), R[..., 0])))


INFAP_EPSILON = 0.00001  # trec_eval's smoothing of infAP's precision estimate


def inf_ap(v: View, rel: float) -> Score:
    """infAP = (1/R) sum over relevant retrieved at 0-based rank j of
    1/(j+1) + j/(j+1) (r + n + u)/j (r + e)/(r + n + 2e) (1 at j = 0), with r, n, u the relevant,
    judged non-relevant and pooled-but-unjudged (grade -1) documents above j, e = 0.00001;
    documents outside the pool are skipped. Equals AP when every document is judged.

    No browsing model: an estimator of AP from a sample of judgments.
    Reference: Yilmaz & Aslam (CIKM 2006); trec_eval ``infAP``.

    >>> from rpdi.metrics import score
    >>> score("infAP", "$-$", R=2) == score("AP", "$-$", R=2)
    True
    """
    b = v.relevant(rel)
    nonrel = ((v.grade < rel) & v.judged).astype(float)
    unjudged = (v.pooled & ~v.judged).astype(float)
    r = np.cumsum(b, axis=-1) - b
    n = np.cumsum(nonrel, axis=-1) - nonrel
    u = np.cumsum(unjudged, axis=-1) - unjudged
    j = v.ranks - 1
    estimate = 1 / (j + 1) + j / (j + 1) * div(r + n + u, j) * (r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)
    term = np.where(j == 0, 1.0, estimate)
    return Score(np.nan_to_num(div((b * term).sum(axis=-1), v.R(rel))))


def utility(v: View, rel: float, a: float, b: float, c: float, d: float, docs: float) -> Score:
    """Utility = a RelRet + b NonRelRet + c RelNotRet + d NonRelNotRet, NonRelNotRet counted
    against a collection of ``docs`` documents (trec_eval -N; only used when d != 0).

    User: the TREC filtering tracks' linear utility of the retrieved set.
    Reference: trec_eval ``utility``.

    >>> from rpdi.metrics import score
    >>> score("Utility(a=2.0)", "$--", R=3)
    0.0
    """
    rel_ret = v.relevant(rel).sum(axis=-1)
    ret = v.length.astype(float)
    R = np.broadcast_to(v.R(rel), rel_ret.shape)
    value = a * rel_ret + b * (ret - rel_ret) + c * (R - rel_ret)
    if d:
        value = value + d * (docs - ret - (R - rel_ret))
    return Score(value)


def unjudged(v: View) -> Score:
    """Unj@k = documents in the top k with no judgment (outside the qrels or grade -1) / k;
    ranks past the ranking count as judged.

    Reference: trec_eval ``unj_k`` (1 - ir_measures' Judged@k).

    >>> from rpdi.metrics import score
    >>> score("Unj@4", "$??-")
    0.5
    """
    return Score((v.retrieved & ~v.judged).sum(axis=-1) / v.k)


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


# The declarations of the measures above, in the order of `rpdi measures`.
def _finite(x: float) -> bool:
    return math.isfinite(x)


register(
    MeasureSpec("NumQ", num_q, (), "none", "no browsing model: counts the evaluated topics",
                "trec_eval num_q", average="sum", model=False),
    MeasureSpec("NumRet", num_ret, (), "none", "no browsing model: counts retrieved documents",
                "trec_eval num_ret", average="sum", model=False),
    MeasureSpec("NumRel", num_rel, (REL,), "none", "no browsing model: counts relevant documents",
                "trec_eval num_rel", average="sum", model=False),
    MeasureSpec("NumRelRet", num_rel_ret, (REL,), "none",
                "no browsing model: counts relevant retrieved documents", "trec_eval num_rel_ret",
                average="sum", model=False),
    MeasureSpec("NumNonRelJudgedRet", num_nonrel_judged_ret, (REL,), "none",
                "no browsing model: counts judged non-relevant retrieved documents",
                "trec_eval num_nonrel_judged_ret", average="sum", model=False),
    MeasureSpec("Bpref", bpref, (REL,), "none",
                "no browsing model: the share of (relevant, judged non-relevant) pairs ranked in order",
                "Buckley & Voorhees 2004; trec_eval bpref", model=False),
    MeasureSpec("GMBpref", bpref, (REL,), "none",
                "no browsing model: bpref's geometric mean over topics", "trec_eval gm_bpref",
                average="geometric", model=False),
    MeasureSpec("infAP", inf_ap, (REL,), "none",
                "no browsing model: an estimate of AP from sampled judgments",
                "Yilmaz & Aslam 2006; trec_eval infAP", model=False),
    MeasureSpec("Utility", utility,
                (REL, Param("a", float, 1.0, "gain of a relevant retrieved document", _finite, "finite"),
                 Param("b", float, -1.0, "gain of a non-relevant retrieved document", _finite, "finite"),
                 Param("c", float, 0.0, "gain of a relevant document not retrieved", _finite, "finite"),
                 Param("d", float, 0.0, "gain of a non-relevant document not retrieved", _finite, "finite"),
                 Param("docs", float, 0.0, "documents in the collection (trec_eval -N)", lambda x: x >= 0, ">= 0")),
                "none", "no browsing model: a linear utility of the retrieved set", "trec_eval utility",
                model=False),
    MeasureSpec("Unj", unjudged, (), "required",
                "no browsing model: the share of unjudged documents in the top k", "trec_eval unj",
                model=False),
    MeasureSpec("G", g_measure, (LEVEL_GAINS,), "none",
                "no browsing model: gain discounted by the ideal gain still missing", "trec_eval G",
                model=False),
    MeasureSpec("BinG", g_measure, (REL,), "none",
                "no browsing model: G with binary gains", "trec_eval binG", model=False,
                extra={"binary": True, "level_gains": ""}),
    MeasureSpec("nDCGrel", ndcg_rel, (LEVEL_GAINS,), "none",
                "no browsing model: the mean nDCG at the relevant documents", "trec_eval ndcg_rel",
                model=False),
    MeasureSpec("RnDCG", r_ndcg, (REL, LEVEL_GAINS), "none",
                "no browsing model: the mean nDCG where the ideal gain drops (R for binary judgments)",
                "trec_eval Rndcg", model=False),
    MeasureSpec("trec_dcg", trec_dcg, (LEVEL_GAINS,), "none",
                "no browsing model under this name: DCG of the whole ranking with trec_eval's level=gain "
                "gains (rpdi's DCG is the reader's)", "trec_eval dcg", model=False),
    MeasureSpec("trec_ideal_dcg", trec_ideal_dcg, (LEVEL_GAINS,), "none",
                "no browsing model: the DCG of the best ranking of the judged documents",
                "trec_eval ideal_dcg", model=False),
    MeasureSpec("RBO", rbo, (persistence("p", "persistence of the comparison"),), "optional",
                "compares each run's ranking with the first run's", "Webber, Moffat & Zobel 2010",
                between_runs=True, extra={"extrapolate": False}),
    MeasureSpec("RBO_EXT", rbo, (persistence("p", "persistence of the comparison"),), "optional",
                "RBO extrapolated beyond the shorter list", "Webber, Moffat & Zobel 2010",
                between_runs=True, extra={"extrapolate": True}),
)
