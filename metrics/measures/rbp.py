"""Rank-biased precision (Moffat & Zobel 2008): RBP, a population of RBP users (BetaRBP), RBP
with two persistences (RBP2), and trec_eval's rbp and rbp_resid.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import sum_in_order
from rpdi.metrics.measures.registry import MAX_REL, REL, MeasureSpec, Param, persistence, register
from rpdi.metrics.view import Score, View


_P = persistence("p", "persistence: probability of reading on")


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


register(
    MeasureSpec("RBP", rbp, (_P, Param("rel", float, None, "binary gains at this grade "
                                          "(default: graded gains grade/max_rel)",
                                          lambda x: x > 0, "> 0", optional=True), MAX_REL),
                "optional", "reads on with probability p after every document",
                "Moffat & Zobel 2008", residual=True),
)


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


register(
    MeasureSpec("BetaRBP", beta_rbp,
                (Param("a", float, 8.0, "Beta shape a of the persistence", lambda x: x > 0, "> 0"),
                 Param("b", float, 2.0, "Beta shape b of the persistence", lambda x: x > 0, "> 0"),
                 Param("rel", float, None, "binary gains at this grade (default: grade/max_rel)",
                       lambda x: x > 0, "> 0", optional=True), MAX_REL),
                "none", "a population of RBP users whose persistence p ~ Beta(a, b)",
                "Carterette, Kanoulas & Yilmaz 2011; Moffat & Zobel 2008", residual=True),
)


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


register(
    MeasureSpec("RBP2", rbp2, (persistence("p1", "persistence after a relevant document"),
                               persistence("p2", "persistence after a non-relevant document"),
                               REL), "optional",
                "reads on with probability p1 after a relevant document, p2 after another",
                "Moffat & Zobel 2008 s4.4"),
)


_TREC_P = persistence("p", "persistence (trec_eval's default 0.9)", 0.9)


def _powers(p: float, k: int) -> np.ndarray:
    """p^0 .. p^k as trec_eval's loops make them, one multiplication per rank (p ** i can differ
    in the last bit)."""
    return np.cumprod(np.r_[1.0, np.full(k, p)])


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


register(
    MeasureSpec("trec_rbp", trec_rbp, (_TREC_P,), "none",
                "RBP's user (grades divided by the topic's largest grade if above 1); rpdi's RBP scales "
                "by the qrels' largest grade and reports the residual with the tail",
                "Moffat & Zobel 2008; trec_eval rbp"),
)


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


register(
    MeasureSpec("trec_rbp_resid", trec_rbp_resid, (_TREC_P,), "none",
                "no browsing model: RBP's residual as trec_eval reports it (0 if all retrieved are judged)",
                "trec_eval rbp_resid", model=False),
)
