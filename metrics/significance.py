"""Comparing systems on per-topic scores: paired tests, intervals, corrections, effect sizes.

Everything works on a matrix X of scores (runs x topics, the same topics for every run) and on
pairs (a, b) of its rows; d = X[b] - X[a] is the per-topic difference of a pair, T its length.
Resampling is vectorised over pairs: one matrix of sign flips (or bootstrap weights) is drawn
per (seed, measure, purpose) and multiplied with all pairs' differences at once, so every pair
is tested against the same resamples.

Tests (two-sided, H0: the two runs are exchangeable on each topic):

- ``t``: Student's paired t, t = mean(d) / (sd(d) / sqrt(T)), T - 1 degrees of freedom;
- ``wilcoxon``: the signed-rank test as ``scipy.stats.wilcoxon`` computes it (defaults);
- ``randomization``: Fisher's sign-flip test, p = share of sign vectors s with
  |sum s_t d_t| >= |sum d_t|, over all 2^T of them when 2^T <= the resamples (exact), else
  (1 + hits) / (1 + B) over B random ones (Smucker, Allan & Carterette 2007);
- ``bootstrap``: Sakai's (2006) paired bootstrap test, the studentised mean of d - mean(d)
  resampled over topics.

Intervals for mean(d): ``t`` (Student), ``percentile`` or ``bca`` (Efron 1987) bootstrap over
topics. Corrections over the pairs of one measure: ``holm`` (Holm 1979), ``bonferroni``,
``tukey`` (Carterette's 2012 randomised Tukey HSD: scores permuted across all runs within each
topic, the range of the permuted run means as the null distribution of every pair's |diff|)
and ``none``. The effect size is the standardised mean difference mean(d) / sd(d) (Cohen's d_z).

>>> import numpy as np
>>> from rpdi.metrics.significance import compare_scores
>>> X = np.array([[0.1, 0.2, 0.3, 0.4, 0.2, 0.1], [0.3, 0.4, 0.4, 0.6, 0.3, 0.2]])
>>> r, = compare_scores(X, ["bm25", "dense"], "AP", test="randomization")
>>> round(r["diff"], 4), r["p"], r["topics"]  # all 64 sign flips: 2 of them as extreme
(0.15, 0.03125, 6)
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
from scipy import stats

from rpdi.choices import CORRECTIONS, TESTS
from rpdi.metrics.errors import InputError
from rpdi.metrics.seeds import stream

FIELDS = ("run_a", "run_b", "measure", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "statistic",
          "p", "p_adjusted", "significant", "effect_size", "topics")
_CELLS = 1 << 22  # pairs x resamples handled per chunk (32 MB of float64)


def pairs_of(runs: Sequence[str], baseline: str | None = None) -> list[tuple[int, int]]:
    """Row pairs (a, b): every pair in the order given, or (baseline, other) for every other run.

    >>> pairs_of(["x", "y", "z"]), pairs_of(["x", "y", "z"], baseline="y")
    ([(0, 1), (0, 2), (1, 2)], [(1, 0), (1, 2)])
    """
    if baseline is None:
        return [(a, b) for a in range(len(runs)) for b in range(a + 1, len(runs))]
    base = list(runs).index(baseline)
    return [(base, b) for b in range(len(runs)) if b != base]


def _chunks(P: int, B: int):
    step = max(1, _CELLS // max(B, 1))
    for lo in range(0, P, step):
        yield slice(lo, min(P, lo + step))


def paired_t(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Paired t statistic and two-sided p of each row of d (P, T): ``scipy.stats.ttest_rel(x, y)``
    for d = x - y (scipy's one-sample t-test of d, to the last bit), except that a row with no
    spread gets t = 0, p = 1 if it is all 0 and t = +-inf, p = 0 otherwise (scipy: NaN)."""
    mean, sd = d.mean(-1), d.std(-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows with no spread, handled below
        res = stats.ttest_1samp(d, 0.0, axis=-1)
        flat = ~(sd > 0)
        t = np.where(flat, np.where(mean == 0, 0.0, np.sign(mean) * np.inf), res.statistic)
    p = np.where(flat, np.where(mean == 0, 1.0, 0.0), res.pvalue)
    return t, p


def wilcoxon(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilcoxon signed-rank statistic and two-sided p of each row of d, as ``scipy.stats.wilcoxon``
    gives them row by row with its defaults (zero differences dropped; the exact distribution
    for small samples without ties or zeros); a row with no difference at all gets W = 0, p = 1.
    scipy is called once for the rows without ties or zeros and once for the others, since its
    choice of method, made once per call, is the same within each group."""
    W, p = np.zeros(len(d)), np.ones(len(d))
    a = np.sort(np.abs(d), axis=-1)
    clean = (a[:, 0] > 0) & (np.diff(a, axis=-1) > 0).all(-1)
    for rows in (clean, ~clean & (a[:, -1] > 0)):
        if rows.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # scipy: few non-zero differences
                res = stats.wilcoxon(d[rows], axis=-1)
            W[rows], p[rows] = res.statistic, res.pvalue
    return W, p


def all_signs(T: int) -> np.ndarray:
    """The 2^T sign vectors of length T as rows (+1/-1), the identity first.

    >>> all_signs(2).tolist()
    [[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]]
    """
    bits = (np.arange(2 ** T)[:, None] >> np.arange(T)) & 1
    return 1.0 - 2.0 * bits


def randomization(d: np.ndarray, resamples: int, rng: np.random.Generator,
                  exhaustive: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fisher's sign-flip test of each row of d: (mean difference, two-sided p).

    ``exhaustive`` None enumerates all 2^T sign vectors when 2^T <= ``resamples`` (p is then the
    exact share of them at least as extreme), else draws ``resamples`` random ones
    (p = (1 + hits) / (1 + resamples), never 0). Sums that differ only by rounding count as
    equal (a tolerance of 1e-10 of sum |d|).
    """
    P, T = d.shape
    if exhaustive is None:
        exhaustive = 2 ** T <= resamples
    signs = all_signs(T) if exhaustive else 1.0 - 2.0 * rng.integers(0, 2, (resamples, T)).astype(np.float64)
    observed = np.abs(d.sum(-1))
    slack = 1e-10 * np.abs(d).sum(-1)
    hits = np.zeros(P, dtype=np.int64)
    for c in _chunks(P, len(signs)):
        flipped = np.abs(d[c] @ signs.T)
        hits[c] = (flipped >= (observed[c] - slack[c])[:, None]).sum(-1)
    p = hits / len(signs) if exhaustive else (1 + hits) / (1 + len(signs))
    return d.mean(-1), p


def _weights(T: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples, T) bootstrap weights: each row the counts of a resample of T topics, over T."""
    return rng.multinomial(T, np.full(T, 1.0 / T), size=resamples) / T


def bootstrap_test(d: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Sakai's (2006) paired bootstrap test: (t, p) with t = mean(d) / (sd(d) / sqrt(T)) and
    p = (1 + hits) / (1 + B), a hit being one of the B resamples of z = d - mean(d) whose
    |t*| >= |t| (Sakai counts hits / B; the + 1 keeps p from being 0, as for the sign flips)."""
    P, T = d.shape
    t, _ = paired_t(d)
    w = _weights(T, resamples, rng)
    z = d - d.mean(-1, keepdims=True)
    hits = np.zeros(P, dtype=np.int64)
    for c in _chunks(P, resamples):
        m1, m2 = z[c] @ w.T, (z[c] * z[c]) @ w.T
        sd = np.sqrt(np.maximum(m2 - m1 * m1, 0.0) * T / (T - 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            t_star = np.where(sd > 0, m1 / (sd / np.sqrt(T)), np.where(np.abs(m1) > 1e-12, np.inf, 0.0))
        hits[c] = (np.abs(t_star) >= np.abs(t[c])[:, None] * (1 - 1e-12)).sum(-1)
    return t, (1 + hits) / (1 + resamples)


def t_interval(d: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Student's interval mean(d) +- t_{T-1} sd(d) / sqrt(T) of each row of d."""
    T = d.shape[-1]
    half = stats.t.ppf((1 + level) / 2, T - 1) * d.std(-1, ddof=1) / np.sqrt(T)
    return d.mean(-1) - half, d.mean(-1) + half


def bootstrap_interval(d: np.ndarray, resamples: int, rng: np.random.Generator, level: float = 0.95,
                       method: str = "percentile") -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap interval for mean(d) of each row of d, resampling topics.

    ``percentile``: the (1 -+ level)/2 quantiles of the resampled means. ``bca``: the quantiles
    at Phi(z0 + (z0 + z)/(1 - a (z0 + z))) for z = Phi^-1((1 -+ level)/2), with the bias z0 =
    Phi^-1(share of resampled means below the mean, ties counted half) and the acceleration a =
    sum(j - mean j)^3 / (6 (sum (j - mean j)^2)^1.5) of the leave-one-topic-out means j
    (Efron 1987). A row whose resampled means never vary gets the interval [mean, mean].
    """
    P, T = d.shape
    w = _weights(T, resamples, rng)
    mean = d.mean(-1)
    tail = (1 - level) / 2
    lo, hi = np.empty(P), np.empty(P)
    for c in _chunks(P, resamples):
        means = np.sort(d[c] @ w.T, axis=-1)
        z = stats.norm.ppf([tail, 1 - tail])
        if method == "percentile":
            q = np.broadcast_to(np.array([tail, 1 - tail]), (means.shape[0], 2))
        else:
            below = (means < mean[c, None]).sum(-1) + 0.5 * (means == mean[c, None]).sum(-1)
            z0 = stats.norm.ppf(below / resamples)[:, None]
            jack = (d[c].sum(-1, keepdims=True) - d[c]) / (T - 1)
            dev = jack.mean(-1, keepdims=True) - jack
            with np.errstate(divide="ignore", invalid="ignore"):
                acc = np.nan_to_num((dev ** 3).sum(-1) / (6 * ((dev ** 2).sum(-1)) ** 1.5))[:, None]
                q = stats.norm.cdf(z0 + (z0 + z) / (1 - acc * (z0 + z)))
        lo[c], hi[c] = _sorted_quantile(means, np.nan_to_num(q, nan=0.5)).T
    flat = np.ptp(d, axis=-1) == 0
    lo[flat], hi[flat] = mean[flat], mean[flat]
    return lo, hi


def _sorted_quantile(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantiles q (P, k) of each sorted row (P, B), linear between order statistics as
    ``np.quantile``'s default."""
    B = rows.shape[-1]
    pos = q * (B - 1)
    k = np.clip(np.floor(pos).astype(np.intp), 0, max(B - 2, 0))
    frac = np.clip(pos - k, 0.0, 1.0)
    low = np.take_along_axis(rows, k, -1)
    high = np.take_along_axis(rows, np.minimum(k + 1, B - 1), -1)
    return low + (high - low) * frac


def adjust(p: np.ndarray, method: str) -> np.ndarray:
    """Adjusted p-values over one family: ``bonferroni`` min(1, m p); ``holm`` the running
    maximum of min(1, (m - j) p_(j)) over the ascending p_(j) (rejecting where adjusted p <= alpha
    is Holm's step-down procedure); ``none`` p itself.

    >>> adjust(np.array([0.01, 0.04, 0.03]), "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, dtype=float)
    m = p.size
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, m * p)
    if method != "holm":
        raise InputError(f"unknown correction {method!r}")
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = stepped
    return out


def tukey_hsd(X: np.ndarray, pairs: Sequence[tuple[int, int]], resamples: int,
              rng: np.random.Generator) -> np.ndarray:
    """Randomised Tukey HSD (Carterette 2012): per pair, (1 + hits) / (1 + B) where a hit is a
    resample, with each topic's scores shuffled across the R runs, whose largest minus smallest
    run mean is >= the pair's |mean difference|. With two runs it is the sign-flip test."""
    R, T = X.shape
    observed = np.array([abs(X[b].mean() - X[a].mean()) for a, b in pairs])
    slack = 1e-10 * np.abs(X).sum(-1).max() / T
    hits = np.zeros(len(pairs), dtype=np.int64)
    step = max(1, _CELLS // (R * T))
    cols = np.arange(T)[None, :, None]
    for lo in range(0, resamples, step):
        n = min(step, resamples - lo)
        perm = rng.permuted(np.broadcast_to(np.arange(R), (n, T, R)), axis=-1)
        means = X.T[cols, perm].mean(1)  # (n, R): run r's mean when topic t gives it X[perm, t]
        spread = means.max(-1) - means.min(-1)
        hits += (spread[None, :] >= observed[:, None] - slack).sum(-1)
    return (1 + hits) / (1 + resamples)


def effect_size(d: np.ndarray) -> np.ndarray:
    """Standardised mean difference mean(d) / sd(d) per row (NaN where sd is 0)."""
    sd = d.std(-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, d.mean(-1) / sd, np.nan)


def _none(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def compare_scores(X: np.ndarray, runs: Sequence[str], measure: str, *, baseline: str | None = None,
                   test: str = "randomization", correction: str = "holm", alpha: float = 0.05,
                   resamples: int = 10_000, seed: int = 0, interval: str | None = None,
                   level: float = 0.95) -> list[dict]:
    """Compare the runs (rows of X, runs x topics) on one measure; one record per pair (a, b)
    with the fields of :data:`FIELDS` (diff = mean_b - mean_a, significant: p_adjusted <= alpha).

    ``interval`` defaults to ``t`` for the t-test and ``bca`` otherwise. With ``tukey`` the
    adjusted p is the larger of the test's p and the randomised Tukey HSD's (computed over all
    runs of X, also against a baseline). Random streams are keyed
    by (seed, measure, purpose), so a measure's results do not depend on the others compared.
    """
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}")
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r}")
    interval = interval or ("t" if test == "t" else "bca")
    X = np.asarray(X, dtype=np.float64)
    R, T = X.shape
    pairs = pairs_of(runs, baseline)
    a, b = (np.array([p[i] for p in pairs], dtype=np.intp) for i in (0, 1))
    d = X[b] - X[a]

    def rng(purpose: str) -> np.random.Generator:
        return np.random.default_rng(stream(seed, measure, purpose))

    if test == "t":
        statistic, p = paired_t(d)
    elif test == "wilcoxon":
        statistic, p = wilcoxon(d)
    elif test == "randomization":
        statistic, p = randomization(d, resamples, rng("flips"))
    else:
        statistic, p = bootstrap_test(d, resamples, rng("bootstrap"))
    if correction == "tukey":
        p_adj = np.maximum(p, tukey_hsd(X, pairs, resamples, rng("tukey")))
    else:
        p_adj = adjust(p, correction)
    if interval == "t":
        lo, hi = t_interval(d, level)
    else:
        lo, hi = bootstrap_interval(d, resamples, rng("interval"), level, interval)
    es = effect_size(d)
    means = X.mean(-1)
    return [{"run_a": runs[i], "run_b": runs[j], "measure": measure, "mean_a": float(means[i]),
             "mean_b": float(means[j]), "diff": float(d[k].mean()), "ci_low": _none(lo[k]),
             "ci_high": _none(hi[k]), "statistic": _none(statistic[k]), "p": float(p[k]),
             "p_adjusted": float(p_adj[k]), "significant": bool(p_adj[k] <= alpha),
             "effect_size": _none(es[k]), "topics": T}
            for k, (i, j) in enumerate(pairs)]


def discriminative_power(records: list[dict], alpha: float = 0.05) -> list[dict]:
    """Sakai's (2006) discriminative power per measure: the achieved significance levels (p) of
    all compared pairs, and the share of pairs with p <= alpha (unadjusted, as Sakai counts).

    >>> discriminative_power([{"measure": "AP", "p": 0.01}, {"measure": "AP", "p": 0.2}])
    [{'measure': 'AP', 'pairs': 2, 'significant': 1, 'alpha': 0.05, 'discriminative_power': 0.5, \
'asl': [0.01, 0.2]}]
    """
    out = []
    for measure in dict.fromkeys(r["measure"] for r in records):
        asl = sorted(r["p"] for r in records if r["measure"] == measure)
        hits = sum(p <= alpha for p in asl)
        out.append({"measure": measure, "pairs": len(asl), "significant": hits, "alpha": alpha,
                    "discriminative_power": hits / len(asl) if asl else None, "asl": asl})
    return out
