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

from rpdi.metrics.measures.kernels import (EXP_TOP, discount, div, first_rank, ideal_gains, judged_gains,
                                           log2_discount, parse_gains, scaled_exp_gains, sum_in_order)
from rpdi.metrics.measures.registry import (LEVEL_GAINS, MAX_REL, REL, MeasureSpec, Param, persistence,
                                            register)
from rpdi.metrics.view import Score, View


def _precision_terms(v: View, rel: float) -> np.ndarray:
    """b_i Prec@i at every rank i, a new array (AP's, SP's and YAAP's terms)."""
    return v.relevant(rel) * v.precisions(rel)


def precision(v: View, rel: float) -> Score:
    """P@k = (1/k) sum_{i<=k} b_i.

    User: reads exactly k documents and reports the fraction that were relevant.
    Reference: trec_eval ``P_k``; Moffat (2013) Prec@k.

    >>> from rpdi.metrics import score
    >>> score("P@4", [1, 0, 1, 0, 1])
    0.5
    """
    num = v.relevant(rel).sum(axis=-1)
    return Score(num / v.k, num=num, den=np.full(num.shape, float(v.k)))


def recall(v: View, rel: float) -> Score:
    """R@k = (1/R) sum_{i<=k} b_i; undefined when R = 0.

    User: reads k documents and counts what share of all relevant documents they met.
    Reference: trec_eval ``recall_k``.

    >>> from rpdi.metrics import score
    >>> score("R@2", [1, 0, 1], R=4)
    0.25
    """
    num = v.relevant(rel).sum(axis=-1)
    den = np.broadcast_to(v.R(rel), num.shape)
    return Score(div(num, den), num=num, den=den)


def set_precision(v: View, rel: float) -> Score:
    """SetP = relevant retrieved / retrieved, over the whole ranking (0 when nothing is retrieved).

    >>> from rpdi.metrics import score
    >>> score("SetP", [1, 0, 1, 0])
    0.5
    """
    num = v.relevant(rel).sum(axis=-1)
    den = v.length.astype(float)
    return Score(np.nan_to_num(div(num, den)), num=num, den=den)


def set_recall(v: View, rel: float) -> Score:
    """SetR = relevant retrieved / R over the whole ranking; undefined when R = 0.

    >>> from rpdi.metrics import score
    >>> score("SetR", [1, 0, 1, 0], R=4)
    0.5
    """
    return recall(v, rel)


def _f(p, r, b2):
    return np.where((p > 0) | (r > 0), div((1 + b2) * p * r, b2 * p + r), np.where(np.isnan(r), np.nan, 0.0))


def f_measure(v: View, rel: float, beta: float) -> Score:
    """F_beta@k = (1 + beta^2) P@k R@k / (beta^2 P@k + R@k); 0 when both are 0, undefined if R = 0.

    Reference: van Rijsbergen (1979); the seeds' product reference page.

    >>> from rpdi.metrics import score
    >>> round(score("F(beta=1)@4", [1, 0, 1, 0], R=2), 4)
    0.6667
    """
    return Score(_f(precision(v, rel).value, recall(v, rel).value, beta * beta))


def set_f(v: View, rel: float, beta: float, beta2: float | None) -> Score:
    """SetF_beta: F_beta of SetP and SetR over the whole ranking; ``beta2`` gives beta^2 itself
    (trec_eval's set_F parameter, so that its value is used exactly).

    >>> from rpdi.metrics import score
    >>> round(score("SetF", [1, 0, 1, 0], R=2), 4)
    0.6667
    """
    b2 = beta * beta if beta2 is None else beta2
    return Score(_f(set_precision(v, rel).value, set_recall(v, rel).value, b2))


def fallout(v: View, rel: float) -> Score:
    """Fallout@k = judged non-relevant documents in the top k / all judged non-relevant ones.

    >>> from rpdi.metrics import score
    >>> score("Fallout@3", [0, 1, 0], judged_grades=[1, 0, 0, 0, 0])
    0.5
    """
    nonrel = ((v.grade < rel) & v.judged).sum(axis=-1).astype(float)
    den = np.broadcast_to(v.n_judged - v.R(rel), nonrel.shape).astype(float)
    return Score(div(nonrel, den), num=nonrel, den=den)


def average_precision(v: View, rel: float) -> Score:
    """AP@k = (1/R) sum_{i<=k} b_i Prec@i; undefined when R = 0.

    User (Robertson 2008): draws a target s ~ U{1..R}, reads until the s-th relevant document
    and reports precision there (0 if it is never found).
    Reference: trec_eval ``map`` / ``map_cut_k``; Moffat & Zobel (2008) Section 2.

    >>> from rpdi.metrics import score
    >>> round(score("AP", "$$---$----$-----$---", R=5), 4)
    0.6316
    """
    return Score(div(sum_in_order(_precision_terms(v, rel), overwrite=True), v.R(rel)))


def sum_precision(v: View, rel: float) -> Score:
    """SP@k = sum_{i<=k} b_i Prec@i (AP without the division by R).

    Reference: Aslam, Pavlu & Yilmaz (2006); Moffat (2013) Section 3.

    >>> from rpdi.metrics import score
    >>> score("SP@3", [1, 0, 1])
    1.6666666666666665
    """
    return Score(_precision_terms(v, rel).sum(axis=-1))


def sn_ap(v: View, rel: float) -> Score:
    """SN-AP@k = SP@k / R_k, R_k the relevant documents within the top k; undefined if R_k = 0.

    Reference: Moffat (2013) Section 3 (self-normalised AP; the RBP paper's AP*).

    >>> from rpdi.metrics import score
    >>> score("SN-AP@5", [1, 0, 0, 0, 1])
    0.7
    """
    return Score(div(_precision_terms(v, rel).sum(axis=-1), v.relevant(rel).sum(axis=-1)))


def recall_cutoff(level, R, compat: str = "trec_eval"):
    """How many relevant documents make recall ``level``: trec_eval 10.0 takes lround(level R)
    (its CHANGELOG: "change uses of int truncation to round"); trec_eval 9.x and pytrec_eval
    took floor(level R + 0.9), in float64 (so 0.7 R for R = 3 gives 2)."""
    x = np.asarray(level, dtype=np.float64) * R
    return np.floor(x + 0.5) if compat == "trec_eval" else np.floor(x + 0.9)


def interpolated_precision(v: View, rel: float, level: float) -> np.ndarray:
    """Interpolated precision at a recall level: max Prec@i over the relevant ranks i at or past
    the c-th relevant document, c = :func:`recall_cutoff` (level, R); 0 if c is never reached."""
    b = v.relevant(rel)
    R = np.broadcast_to(v.R(rel), b.shape[:-1])[..., None]
    needed = recall_cutoff(level, R, v.compat)
    reached = (v.found(rel) >= needed) & (b > 0) & (R > 0)
    return np.where(reached, v.precisions(rel), 0.0).max(axis=-1, initial=0.0)


def iprec(v: View, rel: float, level: float) -> Score:
    """IPrec@r = max{Prec@i : i at or past the c-th relevant document}, c = lround(r R)
    (trec_eval 10.0; 9.x and pytrec_eval: floor(r R + 0.9)); 0 if c is never reached.

    Reference: trec_eval ``iprec_at_recall_r``.

    >>> from rpdi.metrics import score
    >>> round(score("IPrec@0.5", [0, 1, 1, 0], R=2), 4)
    0.6667
    >>> score("IPrec@0.2", [1, 0, 0, 1], R=7)  # lround(1.4) = 1 relevant document
    1.0
    """
    return Score(interpolated_precision(v, rel, level))


def eleven_point_ap(v: View, rel: float, levels: str) -> Score:
    """AP11pt = the mean of IPrec@r over the recall levels r (default 0, 0.1, ..., 1).

    ``levels`` is a comma-separated list as trec_eval's ``11pt_avg`` parameters take it.
    Reference: trec_eval ``11pt_avg``; the IR:VIII lecture chapter (Alternative 2).

    >>> from rpdi.metrics import score
    >>> round(score("AP11pt", [1, 1], R=2), 4)
    1.0
    """
    points = sorted(parse_levels(levels), reverse=True)  # added from the highest level down, as trec_eval does
    values = np.stack([interpolated_precision(v, rel, x) for x in points], axis=-1)
    return Score(sum_in_order(values) / len(points))


def parse_levels(levels: str) -> list[float]:
    """Recall levels from a comma-separated list (empty: 0, 0.1, ..., 1)."""
    if not levels.strip():
        return [i / 10 for i in range(11)]
    return [float(x) for x in levels.split(",")]


def reciprocal_rank(v: View, rel: float) -> Score:
    """RR@k = 1 / (rank of the first relevant document), 0 if none in the top k.

    User: reads down the list and stops at the first relevant document.
    Reference: trec_eval ``recip_rank``; Moffat (2013).

    >>> from rpdi.metrics import score
    >>> score("RR", [0, 0, 1, 1])
    0.3333333333333333
    """
    first = first_rank(v.relevant(rel))
    return Score(np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0))


def rr2(v: View, rel: float) -> Score:
    """RR2@k = 1 / (rank of the second relevant document), 0 if fewer than two in the top k.

    User: a sceptic who stops only once a second relevant document corroborates the first.
    Reference: Moffat & Zobel (2008) Section 4.4.

    >>> from rpdi.metrics import score
    >>> score("RR2", [0, 1, 0, 1])
    0.25
    """
    second = first_rank(v.relevant(rel), nth=2)
    return Score(np.where(second > 0, 1.0 / np.maximum(second, 1), 0.0))


def cautious_rr(v: View, rel: float, c: int) -> Score:
    """CautiousRR(c)@k = 1 / (c + rank of the first relevant document), 0 if none in the top k.

    User: stops only after reading c more documents past the first relevant one.
    Reference: Moffat & Zobel (2008) Section 4.4 ("damping" factor).

    >>> from rpdi.metrics import score
    >>> score("CautiousRR(c=2)", [0, 1, 0])
    0.25
    """
    first = first_rank(v.relevant(rel))
    return Score(np.where(first > 0, 1.0 / (c + np.maximum(first, 1)), 0.0))


def r_precision(v: View, rel: float, cutoff: int | None) -> Score:
    """Rprec = Prec@R (trec_eval); Rprec@k = Prec@min(k, R) (Moffat 2013); undefined if R = 0.

    >>> from rpdi.metrics import score
    >>> score("Rprec", [1, 0, 1, 1], R=3)
    0.6666666666666666
    """
    b = v.relevant(rel)
    R = np.broadcast_to(v.R(rel), b.shape[:-1])
    depth = R if cutoff is None else np.minimum(R, cutoff)
    inside = np.arange(1, v.k + 1) <= depth[..., None]
    return Score(div((b * inside).sum(axis=-1), depth))


def success(v: View, rel: float) -> Score:
    """Success@k = 1 if a relevant document is in the top k, else 0.

    >>> from rpdi.metrics import score
    >>> score("Success@2", [0, 1, 0])
    1.0
    """
    return Score(v.relevant(rel).max(axis=-1, initial=0.0))


def hit(v: View, max_rel: float | None) -> Score:
    """HIT@k = max_{i<=k} r_i, graded r_i = grade / max_rel.

    User: fully satisfied by any one good answer in the top k.
    Reference: Moffat (2013).

    >>> from rpdi.metrics import score
    >>> score("HIT(max_rel=4)@3", [0, 2, 1])
    0.5
    """
    return Score(v.scaled(max_rel).max(axis=-1, initial=0.0))


def best(v: View) -> Score:
    """Best@k = 1 if a document of the topic's highest grade is in the top k; undefined if no
    judged document has a positive grade.

    Reference: the seeds' product reference page.

    >>> from rpdi.metrics import score
    >>> score("Best@2", [1, 2, 0], judged_grades=[2, 1, 0])
    1.0
    """
    top = v.ideal[:, 0]
    found = ((v.grade == top[:, None]) & v.judged).any(axis=-1).astype(float)
    return Score(np.where(top > 0, found, np.nan))


def _gains(v: View, dcg: str) -> np.ndarray:
    """The grade (dcg='log2') or 2^grade - 1; OverflowError where 2^grade passes float's range."""
    if dcg != "log2" and v.grade.size and v.grade.max() >= EXP_GRADE_LIMIT:
        raise OverflowError(f"exp-log2 gain 2^grade - 1 of grade {v.grade.max():g} passes float's range")
    return v.grade if dcg == "log2" else np.exp2(v.grade) - 1.0


EXP_GRADE_LIMIT = 1024  # 2^1024 is beyond the largest float


def dcg(v: View, dcg: str, b: int | None) -> Score:
    """DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1); gain g (dcg='log2') or 2^g - 1 ('exp-log2').

    With ``b``, Järvelin & Kekäläinen's original discount: none up to rank b, 1/log_b(i) after.
    User: reads all k documents, attention fading with rank. Reference: Järvelin & Kekäläinen
    (2002); Moffat (2013).

    >>> from rpdi.metrics import score
    >>> round(score("DCG(b=2)@3", [3, 2, 3]), 2)
    6.89
    """
    return Score((_gains(v, dcg) * discount(np.arange(1, v.k + 1), b)).sum(axis=-1))


def ndcg(v: View, dcg: str, level_gains: str) -> Score:
    """nDCG@k = DCG@k / DCG@k of the ideal ranking of all judged documents; undefined if 0.

    Without a cutoff the ranking is read to its end and the ideal ranking to R (trec_eval
    ``ndcg``). ``level_gains`` gives trec_eval's ``level=gain`` pairs (``ndcg.1=3,2=9``) for
    dcg='log2' (closed form only: nDCG's browsing model reads grades as gains).
    Reference: Järvelin & Kekäläinen (2002); trec_eval ``ndcg``, ``ndcg_cut_k``.

    >>> from rpdi.metrics import score
    >>> round(score("nDCG(dcg='exp-log2')@2", [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]), 2)
    0.78
    """
    pairs = parse_gains(level_gains)
    if pairs:
        gains, ideal = judged_gains(v, pairs), ideal_gains(v, pairs)
    elif dcg == "log2":
        gains, ideal = v.grade, v.ideal
    else:  # per topic, gains over 2^(top grade - EXP_TOP) so that grades of 1024 and more stay finite
        shift = np.maximum(v.ideal[:, :1] - EXP_TOP, 0.0)
        gains, ideal = scaled_exp_gains(v.grade, shift[None]), scaled_exp_gains(v.ideal, shift)
    actual = (gains * log2_discount(v.k)).sum(axis=-1)
    width = ideal.shape[1] if v.cutoff is None else min(v.k, ideal.shape[1])
    ideal_dcg = (np.maximum(ideal[:, :width], 0.0) * log2_discount(width)).sum(axis=-1)
    return Score(div(actual, ideal_dcg))


def sdcg(v: View, max_rel: float | None) -> Score:
    """SDCG@k = DCG@k / sum_{i<=k} 1/log2(i + 1), gains grade / max_rel in [0, 1].

    User: continues from rank i to i + 1 with probability log2(i+1)/log2(i+2), up to rank k.
    Reference: Moffat (2013) Section 2.

    >>> from rpdi.metrics import score
    >>> round(score("SDCG@5", [1, 1, 0, 0, 0]), 2)
    0.55
    """
    w = log2_discount(v.k)
    return Score((v.scaled(max_rel) * w).sum(axis=-1) / w.sum())


def cg(v: View) -> Score:
    """CG@k = sum_{i<=k} g_i.

    >>> from rpdi.metrics import score
    >>> score("CG@3", [3, 2, 3, 0])
    8.0
    """
    return Score(v.grade.sum(axis=-1))


def sn_dcg(v: View, dcg: str) -> Score:
    """SN-DCG@k = DCG@k / DCG@k of the top k sorted by decreasing gain; undefined if 0.

    Reference: Moffat (2013) Section 3 (self-normalised DCG).

    >>> from rpdi.metrics import score
    >>> round(score("SN-DCG@5", [1, 0, 1, 0, 0]), 2)
    0.92
    """
    gains = _gains(v, dcg)
    w = log2_discount(v.k)
    best_order = -np.sort(-gains, axis=-1)
    return Score(div((gains * w).sum(axis=-1), (best_order * w).sum(axis=-1)))


def rbp(v: View, p: float, rel: float | None, max_rel: float | None) -> Score:
    """RBP(p)@k = (1 - p) sum_{i<=k} r_i p^(i-1), residual p^min(n,k) + sum over unjudged i of
    (1 - p) p^(i-1).

    Gains r_i are binary (grade >= rel) when ``rel`` is given, else grade / max_rel.
    User: reads the first document and each next one with probability p; RBP is the expected
    rate of gain per document inspected, E[G] / E[N]. Reference: Moffat & Zobel (2008).

    >>> from rpdi.metrics import score
    >>> round(score("RBP(p=0.5)", "$$---$----$-----$---"), 4)
    0.7661
    """
    gains = v.relevant(rel) if rel is not None else v.scaled(max_rel)
    w = (1 - p) * p ** (v.ranks - 1)
    value = (gains * w).sum(axis=-1)
    unjudged = (v.retrieved & ~v.judged) * w
    residual = unjudged.sum(axis=-1) + p ** v.length
    return Score(value, residual=residual)


def beta_rbp(v: View, a: float, b: float, rel: float | None, max_rel: float | None) -> Score:
    """BetaRBP(a, b) = integral over p of RBP(p) Beta(p; a, b) dp, and likewise its residual,
    from the Beta moments E[(1 - p) p^(i-1)] = B(a + i - 1, b + 1)/B(a, b) and
    E[p^n] = B(a + n, b)/B(a, b) (RBP(p) is a polynomial in p), so also for a or b < 1, where
    the density is infinite at an end of [0, 1].

    User: a population of RBP users, each with a persistence p drawn from Beta(a, b); the score
    is the population's mean of each user's expected rate of gain.
    Reference: Carterette, Kanoulas & Yilmaz (CIKM 2011), simulating populations of users.

    >>> from rpdi.metrics import score
    >>> round(score("BetaRBP(a=1,b=1)", [1]), 4)  # the mean of 1 - p over p ~ U(0, 1)
    0.5
    """
    from scipy.special import betaln

    gains = v.relevant(rel) if rel is not None else v.scaled(max_rel)
    unjudged = (v.retrieved & ~v.judged).astype(float)
    w = np.exp(betaln(a + v.ranks - 1, b + 1) - betaln(a, b))  # E[(1 - p) p^(i-1)]
    tail = np.exp(betaln(a + v.length, b) - betaln(a, b))  # E[p^n]
    return Score((gains * w).sum(-1), residual=(unjudged * w).sum(-1) + tail)


def rbp2(v: View, p1: float, p2: float, rel: float) -> Score:
    """RBP with two persistences: continue with p1 after a relevant document, p2 after another.

    V_1 = 1, V_{i+1} = V_i (p1 if b_i else p2); value = sum_{i<=k} V_i b_i / E[N] with
    E[N] = sum_{i<=k} V_i + V_{k+1} / (1 - p2) (nothing relevant is met beyond depth k).
    With p1 = p2 = p it is RBP(p). Reference: Moffat & Zobel (2008) Section 4.4.

    >>> from rpdi.metrics import score
    >>> round(score("RBP2(p1=0.8,p2=0.8)", [1, 1, 0]), 4)
    0.36
    """
    b = v.relevant(rel)
    step = np.where(b > 0, p1, p2)
    reach = np.cumprod(np.concatenate([np.ones(b.shape[:-1] + (1,)), step], axis=-1), axis=-1)
    depth = reach[..., :-1].sum(axis=-1) + reach[..., -1] / (1 - p2)
    return Score((reach[..., :-1] * b).sum(axis=-1) / depth)


def err(v: View, max_rel: float) -> Score:
    """ERR@k = sum_{i<=k} (1/i) R_i prod_{j<i} (1 - R_j), R_i = (2^g_i - 1) / 2^max_rel.

    User (cascade): at each rank is satisfied with probability R_i and stops; ERR is the
    expected reciprocal rank at which that happens. Reference: Chapelle et al. (2009); gdeval.
    Grades above max_rel count as max_rel (gdeval refuses them), so R_i stays a probability.

    >>> from rpdi.metrics import score
    >>> round(score("ERR@3", [4, 0, 0]), 4)
    0.9375
    >>> score("ERR", [5, 3]) == score("ERR", [4, 3])
    True
    """
    sat = scaled_exp_gains(np.minimum(v.grade, max_rel), max_rel)
    before = np.cumprod(np.concatenate([np.ones(sat.shape[:-1] + (1,)), 1 - sat[..., :-1]], axis=-1), axis=-1)
    return Score((sat * before / v.ranks).sum(axis=-1))


TBG_SUMMARY_TIME = 4.4  # seconds to read a snippet (Smucker & Clarke 2012)
TBG_CLICK = (0.39, 0.64)  # P(click | non-relevant), P(click | relevant)
TBG_SAVE = 0.77  # P(save | click, relevant)


def tbg_document_time(words: float) -> float:
    """Seconds to read a document of this many words: 0.018 words + 7.8."""
    return 0.018 * words + 7.8


def tbg(v: View, halflife: float, words: float, rel: float) -> Score:
    """TBG = sum_k g_k D(T(k)): g_k = P(click|rel) P(save|rel) b_k = 0.64 x 0.77 b_k,
    D(t) = exp(-t ln 2 / halflife), T(k) = sum_{i<k} (4.4 + P(click|b_i) (0.018 words + 7.8)),
    the *expected* time to reach rank k; a document's length comes from a lengths file given by
    the user (``rpdi eval --doc-lengths``, :func:`metrics.trec.with_lengths`) where it has one,
    else ``words``.

    User: reads snippets (4.4 s), clicks (0.64 if relevant, 0.39 if not) and reads the document,
    saves a relevant one with probability 0.77, until a time budget with half-life 224 s runs out.
    Reference: Smucker & Clarke (SIGIR 2012), Time-based calibration of effectiveness measures.

    >>> from rpdi.metrics import score
    >>> round(score("TBG", [1]), 4)  # the first document is reached at time 0
    0.4928
    """
    b = v.relevant(rel)
    click = np.where(b > 0, TBG_CLICK[1], TBG_CLICK[0])
    lengths = words if v.words is None else np.where(np.isnan(v.words), words, v.words)
    step = TBG_SUMMARY_TIME + click * tbg_document_time(lengths)
    reach_time = np.cumsum(step, axis=-1) - step
    return Score((TBG_CLICK[1] * TBG_SAVE * b * np.exp(-reach_time * np.log(2) / halflife)).sum(axis=-1))


CWL_DEPTH = 1000  # cwl_eval's max_depth: C/W/L weights are renormalised over ranks 1..1000


def cwl_continuation(name: str, i, g, seen, T: float = 3.0, p: float = 0.8, k: int | None = None):
    """C/W/L continuation probability C_i of the INST/INSQ/NERR family at rank(s) ``i``, given
    gains ``g`` at i and ``seen`` = sum of gains at ranks 1..i.

    INST: ((i + T + T_i - 1)/(i + T + T_i))^2 with T_i = T - seen; INSQ: ((i + 2T - 1)/(i + 2T))^2;
    NERR8: 1 - g_i; NERR9: i/(i+1) (1 - g_i); NERR10: p (1 - g_i); NERR11: INSQ's C_i (1 - g_i);
    NERR8 and NERR9 are 0 from rank k on. Reference: Moffat, Bailey, Scholer & Thomas (2017) for
    INST; Azzopardi, Mackenzie & Moffat (ICTIR 2021), Eqs. 8-11, for NERR.
    """
    i = np.asarray(i, dtype=np.float64)
    if name == "INST":
        t = i + T + (T - seen)
        return ((t - 1) / t) ** 2
    insq = ((i + 2 * T - 1) / (i + 2 * T)) ** 2
    c = {"INSQ": insq + 0 * g, "NERR8": 1 - g, "NERR9": i / (i + 1) * (1 - g),
         "NERR10": p * (1 - g), "NERR11": insq * (1 - g)}[name]
    if k is not None:
        c = np.where(i < k, c, 0.0)
    return c


def cwl_rate(v: View, family: str, max_rel: float | None, T: float = 3.0, p: float = 0.8,
             cutoff: int | None = None) -> Score:
    """C/W/L expected rate of gain EU = sum_i W_i r_i, W_i = V_i / sum_j V_j,
    V_i = prod_{j<i} C_j over ranks 1..1000 (cwl_eval's max_depth; nothing is met below the
    ranking); r_i = grade / max_rel. C_i from :func:`cwl_continuation`.

    User: reads on from rank i with probability C_i; EU is the expected rate of gain E[G]/E[N].
    Reference: Moffat, Bailey, Scholer & Thomas (2017); Azzopardi, Mackenzie & Moffat (2021).

    >>> from rpdi.metrics import score
    >>> round(score("NERR10(p=0.5)", [1, 0]), 4)  # C_1 = 0: one document read, gain 1
    1.0
    """
    g = v.scaled(max_rel)[..., :CWL_DEPTH]
    g = np.pad(g, ((0, 0), (0, 0), (0, CWL_DEPTH - g.shape[-1])))
    i = np.arange(1, CWL_DEPTH + 1)
    c = cwl_continuation(family, i, g, np.cumsum(g, axis=-1), T=T, p=p, k=cutoff)
    reach = np.cumprod(np.concatenate([np.ones(c.shape[:-1] + (1,)), c[..., :-1]], axis=-1), axis=-1)
    return Score((reach * g).sum(axis=-1) / reach.sum(axis=-1))


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


def rprec_mult(v: View, rel: float, x: float) -> Score:
    """RprecMult(x) = Prec@c, c = floor(x R + 0.9) (trec_eval keeps the 9.x rounding here); 0 when
    c = 0. Documents missing below the ranking count as non-relevant.

    Reference: trec_eval ``Rprec_mult_x``.

    >>> from rpdi.metrics import score
    >>> score("RprecMult(x=2.0)", "$-$-", R=2)
    0.5
    """
    b = v.relevant(rel)
    c = np.floor(x * np.broadcast_to(v.R(rel), b.shape[:-1]) + 0.9)
    inside = v.ranks <= c[..., None]
    return Score(np.nan_to_num(div((b * inside).sum(axis=-1), c)))


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


def relative_precision(v: View, rel: float) -> Score:
    """RelP@k = relevant in the top k / min(k, R): P@k over the best P@k possible; 0 if R = 0.

    Reference: trec_eval ``relative_P_k``.

    >>> from rpdi.metrics import score
    >>> score("RelP@4", "$--$", R=2)
    1.0
    """
    return _relative(v, rel, v.k)


def set_relative_precision(v: View, rel: float) -> Score:
    """SetRelP = relevant retrieved / min(retrieved, R); 0 if either is 0.

    Reference: trec_eval ``set_relative_P``.

    >>> from rpdi.metrics import score
    >>> score("SetRelP", "$--", R=2)
    0.5
    """
    return _relative(v, rel, v.length)


def _relative(v: View, rel: float, depth) -> Score:
    """Relevant documents read over the most there could be at that ``depth``: min(depth, R)."""
    return Score(np.nan_to_num(div(v.relevant(rel).sum(axis=-1), np.minimum(depth, v.R(rel)))))


def set_ap(v: View, rel: float) -> Score:
    """SetAP = SetP x SetR, the average precision of an unranked retrieved set.

    Reference: trec_eval ``set_map``.

    >>> from rpdi.metrics import score
    >>> score("SetAP", "$-", R=2)
    0.25
    """
    p = set_precision(v, rel)  # one division, as trec_eval: (r * r) / (n * R)
    return Score(np.nan_to_num(div(p.num * p.num, p.den * v.R(rel))))


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


def yaap(v: View, rel: float) -> Score:
    """YAAP = log((1 + SP) / (1 + R - SP)), SP = sum over relevant retrieved i of Prec@i (AP
    without the division by R): AP smoothed so that it averages over topics.

    No browsing model: a transform of AP for averaging. Reference: Robertson, "On Smoothing
    Average Precision" (ECIR 2012); trec_eval ``yaap``.

    >>> from rpdi.metrics import score
    >>> round(score("YAAP", [1, 0], R=1), 4)  # log(2 / 1)
    0.6931
    """
    sp = sum_in_order(_precision_terms(v, rel), overwrite=True)
    return Score(np.log((1.0 + sp) / (1.0 + v.R(rel) - sp)))


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


def trec_rbp(v: View, p: float) -> Score:
    """rbp = (1 - p) sum_i g_i p^(i-1), g_i the grade, divided by the topic's largest grade when
    that exceeds 1 (trec_eval normalises its gains to [0, 1]; its m_rbp.c starts that min/max
    search from uninitialised variables, and a gcc 12 x86-64 build of 10.0-rc2 behaves as if
    they were 0, which is this rule: checked on the 5 CAsT 2021 runs).

    User: RBP's, reading on with probability p. Reference: Moffat & Zobel (2008); trec_eval
    ``rbp`` (default p = 0.9).

    >>> from rpdi.metrics import score
    >>> round(score("trec_rbp", "$-$"), 4)
    0.181
    """
    top = np.maximum(v.ideal.max(axis=-1, initial=0.0), 1.0)[:, None]
    g = np.where(v.judged, v.grade, 0.0) / top  # (S, T, k) / (T, 1): each topic by its own largest grade
    return Score((1 - p) * sum_in_order(g * _powers(p, v.k)[:-1]))


def trec_rbp_resid(v: View, p: float) -> Score:
    """rbp_resid = p^n + (1 - p) sum over unjudged retrieved i of p^(i-1), and 0 when every
    retrieved document is judged (trec_eval's; rpdi's RBP residual always keeps the tail p^n).

    Reference: trec_eval ``rbp_resid``.

    >>> from rpdi.metrics import score
    >>> score("trec_rbp_resid", "$-$")
    0.0
    """
    unj = v.retrieved & ~v.judged
    w = _powers(p, v.k)
    value = w[v.length] + (1 - p) * sum_in_order(unj * w[:-1])
    return Score(np.where(unj.any(axis=-1), value, 0.0))


def _powers(p: float, k: int) -> np.ndarray:
    """p^0 .. p^k as trec_eval's loops make them, one multiplication per rank (p ** i can differ
    in the last bit)."""
    return np.cumprod(np.r_[1.0, np.full(k, p)])


# The declarations of the measures above, in the order of `rpdi measures`.
_BETA = Param("beta", float, 1.0, "weight of recall against precision", lambda x: x > 0, "> 0")
_DCG = Param("dcg", str, "log2", "'log2': gain g (trec_eval); 'exp-log2': gain 2^g - 1",
             lambda x: x in ("log2", "exp-log2"), "'log2' or 'exp-log2'")
_T = Param("T", float, 3.0, "expected number of relevant documents wanted", lambda x: x > 0, "> 0")
_P = Param("p", float, 0.8, "persistence: probability of reading on", lambda x: 0 <= x < 1, "in [0, 1)")
_TREC_P = persistence("p", "persistence (trec_eval's default 0.9)", 0.9)


def _finite(x: float) -> bool:
    return math.isfinite(x)


def _levels_ok(text: str) -> bool:
    try:
        return all(0 <= x <= 1 for x in parse_levels(text))
    except ValueError:
        return False


register(
    MeasureSpec("P", precision, (REL,), "required",
                "reads exactly k documents", "trec_eval P_k; Moffat 2013", micro=True),
    MeasureSpec("R", recall, (REL,), "required",
                "reads k documents, counts the share of all relevant ones met", "trec_eval recall_k",
                micro=True),
    MeasureSpec("SetP", set_precision, (REL,), "none",
                "reads the whole retrieved set", "trec_eval set_P", micro=True),
    MeasureSpec("SetR", set_recall, (REL,), "none",
                "reads the whole retrieved set", "trec_eval set_recall", micro=True),
    MeasureSpec("F", f_measure, (REL, _BETA), "required",
                "reads k documents; harmonic mean of P@k and R@k", "van Rijsbergen 1979"),
    MeasureSpec("SetF", set_f, (REL, _BETA, Param("beta2", float, None, "beta^2 itself, overriding beta "
                                                         "(trec_eval's set_F parameter)", lambda x: x > 0,
                                                         "> 0", optional=True)), "none",
                "reads the whole retrieved set; harmonic mean of SetP and SetR", "trec_eval set_F"),
    MeasureSpec("Fallout", fallout, (REL,), "required",
                "reads k documents, counts the share of judged non-relevant ones met",
                "Salton & McGill 1983", micro=True),
    MeasureSpec("RelP", relative_precision, (REL,), "required",
                "reads exactly k documents; P@k over the best P@k possible", "trec_eval relative_P"),
    MeasureSpec("SetRelP", set_relative_precision, (REL,), "none",
                "reads the whole retrieved set; SetP over the best SetP possible", "trec_eval set_relative_P"),
    MeasureSpec("SetAP", set_ap, (REL,), "none",
                "reads the whole retrieved set; SetP x SetR", "trec_eval set_map"),
    MeasureSpec("AP", average_precision, (REL,), "optional",
                "draws a target s ~ U{1..R}, reads to the s-th relevant document, reports the "
                "precision there (0 if never found)", "Robertson 2008; trec_eval map"),
    MeasureSpec("SP", sum_precision, (REL,), "required",
                "AP's user without the division by R", "Aslam, Pavlu & Yilmaz 2006; Moffat 2013"),
    MeasureSpec("SN-AP", sn_ap, (REL,), "required",
                "AP's user with R replaced by the relevant documents in the top k", "Moffat 2013"),
    MeasureSpec("IPrec", iprec, (REL,), "required",
                "interpolated precision at a recall level (lround(r R) relevant documents, trec_eval "
                "10.0; floor(r R + 0.9) under --compat pytrec_eval)", "trec_eval iprec_at_recall",
                cutoff_kind=float, passes_cutoff=True),
    MeasureSpec("AP11pt", eleven_point_ap,
                (REL, Param("levels", str, "", "comma-separated recall levels (default 0, 0.1, ..., 1)",
                               _levels_ok, "numbers in [0, 1]")), "none",
                "mean interpolated precision at recall 0, 0.1, ..., 1", "trec_eval 11pt_avg"),
    MeasureSpec("GMAP", average_precision, (REL,), "none",
                "AP's user; the geometric mean over topics (each AP at least 0.00001)",
                "Robertson 2006; trec_eval gm_map", average="geometric", model=False),
    MeasureSpec("YAAP", yaap, (REL,), "none",
                "no browsing model: AP smoothed for averaging over topics", "Robertson 2012; trec_eval yaap",
                model=False),
    MeasureSpec("RR", reciprocal_rank, (REL,), "optional",
                "stops at the first relevant document", "trec_eval recip_rank; Moffat 2013"),
    MeasureSpec("RR2", rr2, (REL,), "optional",
                "a sceptic: stops at the second relevant document", "Moffat & Zobel 2008 s4.4"),
    MeasureSpec("CautiousRR", cautious_rr,
                (REL, Param("c", int, 1, "documents read past the first relevant one",
                               lambda x: x >= 0, ">= 0")), "optional",
                "stops c documents after the first relevant one", "Moffat & Zobel 2008 s4.4"),
    MeasureSpec("Rprec", r_precision, (REL,), "optional",
                "reads R documents (at most k)", "trec_eval Rprec; Moffat 2013", passes_cutoff=True),
    MeasureSpec("RprecMult", rprec_mult,
                (REL, Param("x", float, 1.0, "multiple of R read", lambda x: x >= 0, ">= 0")), "none",
                "reads floor(x R + 0.9) documents", "trec_eval Rprec_mult"),
    MeasureSpec("Success", success, (REL,), "required",
                "satisfied by any relevant document in the top k", "trec_eval success_k"),
    MeasureSpec("HIT", hit, (MAX_REL,), "required",
                "satisfied by the best document in the top k (graded)", "Moffat 2013"),
    MeasureSpec("Best", best, (), "required",
                "satisfied only by a document of the topic's highest grade", "product reference"),
    MeasureSpec("DCG", dcg, (_DCG, Param("b", int, None, "Järvelin-Kekäläinen log base "
                                            "(no discount up to rank b)", lambda x: x >= 2, ">= 2",
                                            optional=True)), "optional",
                "reads every document, attention fading as 1/log(rank)",
                "Järvelin & Kekäläinen 2002; Moffat 2013"),
    MeasureSpec("nDCG", ndcg, (_DCG, LEVEL_GAINS), "optional",
                "DCG's user, scored against the best ranking of this topic",
                "Järvelin & Kekäläinen 2002; trec_eval ndcg_cut"),
    MeasureSpec("SDCG", sdcg, (MAX_REL,), "required",
                "continues from rank i with probability log2(i+1)/log2(i+2), up to rank k",
                "Moffat 2013"),
    MeasureSpec("CG", cg, (), "required", "reads k documents, adding up their grades",
                "Järvelin & Kekäläinen 2002"),
    MeasureSpec("SN-DCG", sn_dcg, (_DCG,), "required",
                "DCG's user, scored against the best reordering of the top k", "Moffat 2013"),
    MeasureSpec("RBP", rbp, (_P, Param("rel", float, None, "binary gains at this grade "
                                          "(default: graded gains grade/max_rel)",
                                          lambda x: x > 0, "> 0", optional=True), MAX_REL),
                "optional", "reads on with probability p after every document",
                "Moffat & Zobel 2008", residual=True),
    MeasureSpec("BetaRBP", beta_rbp,
                (Param("a", float, 8.0, "Beta shape a of the persistence", lambda x: x > 0, "> 0"),
                 Param("b", float, 2.0, "Beta shape b of the persistence", lambda x: x > 0, "> 0"),
                 Param("rel", float, None, "binary gains at this grade (default: grade/max_rel)",
                       lambda x: x > 0, "> 0", optional=True), MAX_REL),
                "none", "a population of RBP users whose persistence p ~ Beta(a, b)",
                "Carterette, Kanoulas & Yilmaz 2011; Moffat & Zobel 2008", residual=True),
    MeasureSpec("RBP2", rbp2, (persistence("p1", "persistence after a relevant document"),
                                  persistence("p2", "persistence after a non-relevant document"),
                                  REL), "optional",
                "reads on with probability p1 after a relevant document, p2 after another",
                "Moffat & Zobel 2008 s4.4"),
    MeasureSpec("trec_rbp", trec_rbp, (_TREC_P,), "none",
                "RBP's user (grades divided by the topic's largest grade if above 1); rpdi's RBP scales "
                "by the qrels' largest grade and reports the residual with the tail",
                "Moffat & Zobel 2008; trec_eval rbp"),
    MeasureSpec("trec_rbp_resid", trec_rbp_resid, (_TREC_P,), "none",
                "no browsing model: RBP's residual as trec_eval reports it (0 if all retrieved are judged)",
                "trec_eval rbp_resid", model=False),
    MeasureSpec("ERR", err, (Param("max_rel", float, 4.0, "grade of certain satisfaction",
                                      lambda x: x > 0, "> 0"),), "optional",
                "stops satisfied at rank i with probability (2^g_i - 1)/2^max_rel",
                "Chapelle et al. 2009; gdeval"),
    *[MeasureSpec(name, cwl_rate, params, cutoff,
                  f"C/W/L user reading on with probability {rule}", citation, passes_cutoff=True,
                  extra={"family": name})
      for name, params, cutoff, rule, citation in [
          ("INST", (_T, MAX_REL), "none", "((i+T+T_i-1)/(i+T+T_i))^2, T_i = T - gain so far",
           "Moffat, Bailey, Scholer & Thomas 2017"),
          ("INSQ", (_T, MAX_REL), "none", "((i+2T-1)/(i+2T))^2",
           "Moffat, Bailey, Scholer & Thomas 2017"),
          ("NERR8", (MAX_REL,), "required", "1 - r_i up to rank k (Eq. 8)",
           "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR9", (MAX_REL,), "required", "i/(i+1) (1 - r_i) up to rank k (Eq. 9)",
           "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR10", (persistence("p", "patience phi"), MAX_REL), "none", "phi (1 - r_i) (Eq. 10)",
           "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR11", (_T, MAX_REL), "none", "((i+2T-1)/(i+2T))^2 (1 - r_i) (Eq. 11)",
           "Azzopardi, Mackenzie & Moffat 2021"),
      ]],
    MeasureSpec("TBG", tbg, (Param("halflife", float, 224.0, "half-life of the time budget (s)",
                                      lambda x: x > 0, "> 0"),
                                Param("words", float, 1000.0, "length in words of a document the lengths file (--doc-lengths) does not give",
                                      lambda x: x >= 0, ">= 0"), REL), "none",
                "reads snippets, clicks and saves, until a time budget with this half-life runs out",
                "Smucker & Clarke 2012"),
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
