"""The published closed forms, vectorised over (run, topic, rank) arrays.

Each function takes a :class:`~metrics.view.View` (the rankings cut at depth k) and the
measure's parameters, and returns a :class:`~metrics.view.Score`. Notation: g_i the grade at
rank i, b_i = [g_i >= rel], R the number of judged documents with grade >= rel, n the ranking's
length, k the cutoff. Undefined values are NaN; :mod:`metrics.evaluate` reports them as 0
(trec_eval) or null. The examples use :func:`metrics.score`, which scores one grade vector.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.view import Score, View


def _div(num, den):
    """num / den, NaN where den == 0."""
    num, den = np.broadcast_arrays(np.asarray(num, float), np.asarray(den, float))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _first_rank(b: np.ndarray, nth: int = 1) -> np.ndarray:
    """1-based rank of the nth relevant document (0 where there are fewer than nth)."""
    hits = np.cumsum(b, axis=-1) >= nth
    found = hits.any(axis=-1)
    return np.where(found, hits.argmax(axis=-1) + 1, 0)


def _log2_discount(k: int) -> np.ndarray:
    return discount(np.arange(1, k + 1))


def _precisions(b: np.ndarray) -> np.ndarray:
    """Prec@i for every rank i."""
    return np.cumsum(b, axis=-1) / np.arange(1, b.shape[-1] + 1)


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
    return Score(_div(num, den), num=num, den=den)


def set_precision(v: View, rel: float) -> Score:
    """SetP = relevant retrieved / retrieved, over the whole ranking (0 when nothing is retrieved).

    >>> from rpdi.metrics import score
    >>> score("SetP", [1, 0, 1, 0])
    0.5
    """
    num = v.relevant(rel).sum(axis=-1)
    den = v.length.astype(float)
    return Score(np.nan_to_num(_div(num, den)), num=num, den=den)


def set_recall(v: View, rel: float) -> Score:
    """SetR = relevant retrieved / R over the whole ranking; undefined when R = 0.

    >>> from rpdi.metrics import score
    >>> score("SetR", [1, 0, 1, 0], R=4)
    0.5
    """
    return recall(v, rel)


def _f(p, r, beta):
    b2 = beta * beta
    return np.where((p > 0) | (r > 0), _div((1 + b2) * p * r, b2 * p + r), np.where(np.isnan(r), np.nan, 0.0))


def f_measure(v: View, rel: float, beta: float) -> Score:
    """F_beta@k = (1 + beta^2) P@k R@k / (beta^2 P@k + R@k); 0 when both are 0, undefined if R = 0.

    Reference: van Rijsbergen (1979); the seeds' product reference page.

    >>> from rpdi.metrics import score
    >>> round(score("F(beta=1)@4", [1, 0, 1, 0], R=2), 4)
    0.6667
    """
    return Score(_f(precision(v, rel).value, recall(v, rel).value, beta))


def set_f(v: View, rel: float, beta: float) -> Score:
    """SetF_beta: F_beta of SetP and SetR over the whole ranking.

    >>> from rpdi.metrics import score
    >>> round(score("SetF", [1, 0, 1, 0], R=2), 4)
    0.6667
    """
    return Score(_f(set_precision(v, rel).value, set_recall(v, rel).value, beta))


def fallout(v: View, rel: float) -> Score:
    """Fallout@k = judged non-relevant documents in the top k / all judged non-relevant ones.

    >>> from rpdi.metrics import score
    >>> score("Fallout@3", [0, 1, 0], judged_grades=[1, 0, 0, 0, 0])
    0.5
    """
    nonrel = ((v.grade < rel) & v.judged).sum(axis=-1).astype(float)
    den = np.broadcast_to(v.n_judged - v.R(rel), nonrel.shape).astype(float)
    return Score(_div(nonrel, den), num=nonrel, den=den)


def average_precision(v: View, rel: float) -> Score:
    """AP@k = (1/R) sum_{i<=k} b_i Prec@i; undefined when R = 0.

    User (Robertson 2008): draws a target s ~ U{1..R}, reads until the s-th relevant document
    and reports precision there (0 if it is never found).
    Reference: trec_eval ``map`` / ``map_cut_k``; Moffat & Zobel (2008) Section 2.

    >>> from rpdi.metrics import score
    >>> round(score("AP", "$$---$----$-----$---", R=5), 4)
    0.6316
    """
    b = v.relevant(rel)
    return Score(_div((b * _precisions(b)).sum(axis=-1), v.R(rel)))


def sum_precision(v: View, rel: float) -> Score:
    """SP@k = sum_{i<=k} b_i Prec@i (AP without the division by R).

    Reference: Aslam, Pavlu & Yilmaz (2006); Moffat (2013) Section 3.

    >>> from rpdi.metrics import score
    >>> score("SP@3", [1, 0, 1])
    1.6666666666666665
    """
    b = v.relevant(rel)
    return Score((b * _precisions(b)).sum(axis=-1))


def sn_ap(v: View, rel: float) -> Score:
    """SN-AP@k = SP@k / R_k, R_k the relevant documents within the top k; undefined if R_k = 0.

    Reference: Moffat (2013) Section 3 (self-normalised AP; the RBP paper's AP*).

    >>> from rpdi.metrics import score
    >>> score("SN-AP@5", [1, 0, 0, 0, 1])
    0.7
    """
    b = v.relevant(rel)
    return Score(_div((b * _precisions(b)).sum(axis=-1), b.sum(axis=-1)))


def interpolated_precision(v: View, rel: float, level: float) -> np.ndarray:
    """Interpolated precision at a recall level: max Prec@i over the relevant ranks i at or past
    the c-th relevant document, c = floor(level * R + 0.9) computed in float64 as trec_eval does
    (so c = ceil(level * R) but for rounding: 0.7 * 3 + 0.9 < 3 gives c = 2)."""
    b = v.relevant(rel)
    R = np.broadcast_to(v.R(rel), b.shape[:-1])[..., None]
    needed = np.floor(level * R + 0.9)
    reached = (np.cumsum(b, axis=-1) >= needed) & (b > 0) & (R > 0)
    return np.where(reached, _precisions(b), 0.0).max(axis=-1, initial=0.0)


def iprec(v: View, rel: float, level: float) -> Score:
    """IPrec@r = max{Prec@i : recall at i >= r} (0 if recall r is never reached).

    "Recall r reached" is trec_eval's: at least floor(r R + 0.9) relevant documents (float64).
    Reference: trec_eval ``iprec_at_recall_r``.

    >>> from rpdi.metrics import score
    >>> round(score("IPrec@0.5", [0, 1, 1, 0], R=2), 4)
    0.6667
    """
    return Score(interpolated_precision(v, rel, level))


def eleven_point_ap(v: View, rel: float) -> Score:
    """AP11pt = (1/11) sum_{r in 0, 0.1, ..., 1} IPrec@r.

    Reference: trec_eval ``11pt_avg``; the IR:VIII lecture chapter (Alternative 2).

    >>> from rpdi.metrics import score
    >>> round(score("AP11pt", [1, 1], R=2), 4)
    1.0
    """
    levels = np.round(np.arange(11) / 10, 1)
    return Score(np.mean([interpolated_precision(v, rel, x) for x in levels], axis=0))


def reciprocal_rank(v: View, rel: float) -> Score:
    """RR@k = 1 / (rank of the first relevant document), 0 if none in the top k.

    User: reads down the list and stops at the first relevant document.
    Reference: trec_eval ``recip_rank``; Moffat (2013).

    >>> from rpdi.metrics import score
    >>> score("RR", [0, 0, 1, 1])
    0.3333333333333333
    """
    first = _first_rank(v.relevant(rel))
    return Score(np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0))


def rr2(v: View, rel: float) -> Score:
    """RR2@k = 1 / (rank of the second relevant document), 0 if fewer than two in the top k.

    User: a sceptic who stops only once a second relevant document corroborates the first.
    Reference: Moffat & Zobel (2008) Section 4.4.

    >>> from rpdi.metrics import score
    >>> score("RR2", [0, 1, 0, 1])
    0.25
    """
    second = _first_rank(v.relevant(rel), nth=2)
    return Score(np.where(second > 0, 1.0 / np.maximum(second, 1), 0.0))


def cautious_rr(v: View, rel: float, c: int) -> Score:
    """CautiousRR(c)@k = 1 / (c + rank of the first relevant document), 0 if none in the top k.

    User: stops only after reading c more documents past the first relevant one.
    Reference: Moffat & Zobel (2008) Section 4.4 ("damping" factor).

    >>> from rpdi.metrics import score
    >>> score("CautiousRR(c=2)", [0, 1, 0])
    0.25
    """
    first = _first_rank(v.relevant(rel))
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
    return Score(_div((b * inside).sum(axis=-1), depth))


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
EXP_TOP = 500  # normalised measures scale exp-log2 gains to at most 2^EXP_TOP: squares stay finite


def scaled_exp_gains(grade: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """(2^grade - 1) / 2^shift, computed without forming 2^grade (exact where no shift is needed:
    shift 0 gives 2^grade - 1). A ratio of such gains with one shift per topic is unchanged."""
    return np.exp2(grade - shift) - np.exp2(-shift)


def discount(rank, b: int | None = None) -> np.ndarray:
    """w_i = 1/log2(i + 1), or Järvelin-Kekäläinen's 1 up to rank b and 1/log_b(i) after."""
    i = np.asarray(rank, dtype=np.float64)
    if b is None:
        return 1.0 / np.log2(i + 1)
    return np.where(i <= b, 1.0, np.log(b) / np.log(np.maximum(i, 2)))


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


def ndcg(v: View, dcg: str) -> Score:
    """nDCG@k = DCG@k / DCG@k of the ideal ranking of all judged documents; undefined if 0.

    Without a cutoff the ranking is read to its end and the ideal ranking to R (trec_eval
    ``ndcg``). Reference: Järvelin & Kekäläinen (2002); trec_eval ``ndcg_cut_k``.

    >>> from rpdi.metrics import score
    >>> round(score("nDCG(dcg='exp-log2')@2", [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]), 2)
    0.78
    """
    if dcg == "log2":
        gains, ideal = v.grade, v.ideal
    else:  # per topic, gains over 2^(top grade - EXP_TOP) so that grades of 1024 and more stay finite
        shift = np.maximum(v.ideal[:, :1] - EXP_TOP, 0.0)
        gains, ideal = scaled_exp_gains(v.grade, shift[None]), scaled_exp_gains(v.ideal, shift)
    actual = (gains * _log2_discount(v.k)).sum(axis=-1)
    width = ideal.shape[1] if v.cutoff is None else min(v.k, ideal.shape[1])
    ideal_dcg = (ideal[:, :width] * _log2_discount(width)).sum(axis=-1)
    return Score(_div(actual, ideal_dcg))


def sdcg(v: View, max_rel: float | None) -> Score:
    """SDCG@k = DCG@k / sum_{i<=k} 1/log2(i + 1), gains grade / max_rel in [0, 1].

    User: continues from rank i to i + 1 with probability log2(i+1)/log2(i+2), up to rank k.
    Reference: Moffat (2013) Section 2.

    >>> from rpdi.metrics import score
    >>> round(score("SDCG@5", [1, 1, 0, 0, 0]), 2)
    0.55
    """
    w = _log2_discount(v.k)
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
    w = _log2_discount(v.k)
    best_order = -np.sort(-gains, axis=-1)
    return Score(_div((gains * w).sum(axis=-1), (best_order * w).sum(axis=-1)))


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
    the *expected* time to reach rank k; a document's length is the run's seventh column where
    it has one, else ``words``.

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
