"""p-values for the three-way verdict: normal z-tests, Bennett's bound, Holm's step-down.

The screen uses the normal approximation (powerful, but its error rate is only asymptotic and
fails for rare events); the confirmation uses Bennett's inequality, which holds for any number
of users and any outcome distribution with the stated variance and range, also for the
dispersion test's squared z-scores (:func:`dispersion_p`).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from rpdi.metrics.significance import adjust

CAP = 16.0  # the dispersion test's upper tail counts a ranking's z^2 up to this (|z| = 4)


def p_values(z) -> np.ndarray:
    """Two-sided p-values of standard normal z-scores."""
    return 2 * norm.sf(np.abs(np.asarray(z, dtype=float)))


def holm(p, alpha: float = 0.01) -> np.ndarray:
    """Which hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``.

    Sorted ascending, p_(j) is rejected while p_(j) <= alpha / (m - j) (j from 0); the first
    acceptance stops the procedure. Reference: Holm (1979).

    >>> holm([0.001, 0.03, 0.04], alpha=0.05).tolist()
    [True, False, False]
    """
    return adjust(np.asarray(p, dtype=float), "holm") <= alpha  # Holm-adjusted p-values


def bennett_tail(d: float, variance: float, bound: float) -> float:
    """Bennett's bound on P(S >= d) for a sum S of independent zero-mean terms, each at most
    ``bound``, whose variances add up to ``variance``:

        P(S >= d) <= exp(-(v / b^2) h(b d / v)),  h(u) = (1 + u) ln(1 + u) - u.

    For small b d / v it is the normal exponent exp(-d^2 / 2v); for a rare large term (b d >> v)
    it is Poisson-like, so one user who reaches a deep relevant document is not a disagreement.
    Reference: Bennett (1962); Boucheron, Lugosi & Massart (2013), Thm. 2.9.

    >>> from rpdi.simulate.stats import bennett_tail
    >>> round(bennett_tail(3.0, 1.0, 1e-9), 4)  # a nearly Gaussian sum: exp(-4.5)
    0.0111
    >>> bennett_tail(0.0, 1.0, 1.0)
    1.0
    """
    if d <= 0:
        return 1.0
    if variance <= 0:
        return 0.0 if bound <= 0 or d > 0 else 1.0
    if bound <= 0:  # no term can exceed its mean: S <= 0 surely
        return 0.0
    return float(np.exp(-(variance / bound ** 2) * _bennett_h(bound * d / variance)))


def _bennett_h(u: float) -> float:
    """h(u) = (1 + u) ln(1 + u) - u for u >= 0; below u = 1e-4 its series
    u^2/2 - u^3/6 + u^4/12 - u^5/20 + u^6/30 (the rest is below u^7/42). The direct formula
    subtracts two numbers near u that differ by about u^2/2, keeping about 16 + log10(u) digits:
    none near u = 1e-16, and a value too large makes the bound too small (at d = 12 sqrt(v),
    b d / v = 2e-16 it came out 1e-7 times Bennett's).

    >>> round(_bennett_h(1e-15) / 1e-30, 12)  # the direct formula: 5.9e-31
    0.5
    """
    if u < 1e-4:
        return u * u * (1 / 2 - u * (1 / 6 - u * (1 / 12 - u * (1 / 20 - u / 30))))
    return (1 + u) * np.log1p(u) - u


def bennett_p(d: float, variance: float, upper: float, lower: float, slack: float = 0.0) -> float:
    """Two-sided p-value of a sum S = d of independent zero-mean terms with total variance
    ``variance``, each term at most ``upper`` above and ``lower`` below its mean:
    P(|S| >= |d|) <= Bennett(upper) + Bennett(lower) (+ ``slack``, the probability that a term
    escaped its lower bound, see :func:`rpdi.simulate.sample.mean_stats`).

    >>> from rpdi.simulate.stats import bennett_p
    >>> bennett_p(0.1, 1.0, 1.0, 1.0)
    1.0
    """
    a = abs(d)
    return float(min(1.0, bennett_tail(a, variance, upper) + bennett_tail(a, variance, lower) + slack))


def dispersion_p(z2, bound, slack: float = 0.0, cap: float = CAP) -> float:
    """Two-sided p-value of the dispersion test: T rankings' squared z-scores ``z2``, independent,
    each of mean exactly 1 and variance at most ``bound`` (2 + B^2/(n var), see
    :func:`rpdi.simulate.sample.dispersion`) when users are independent.

    Upper tail, on W_t = min(z_t^2, cap) (cap >= 1): E W_t <= 1, so sum W_t - T >= d needs
    sum (W_t - E W_t) >= d, a sum of independent terms each at most cap above its mean, with
    Var W_t <= E (W_t - 1)^2 <= E (z_t^2 - 1)^2 <= bound_t (|W_t - 1| <= |z_t^2 - 1|): Bennett's
    bound with range cap. Lower tail, on z_t^2 itself: 1 - z_t^2 <= 1, so T - sum z_t^2 >= d
    has Bennett's bound with range 1. Each bound is a valid one-sided p-value; twice the smaller
    (Bonferroni over the two sides), plus ``slack`` (the chance that a bound used fails), is
    the two-sided one. The cap makes the upper tail exponential (Chebyshev's, bound/d^2, is all
    that a variance alone gives); a ranking far off counts as cap: one ranking's large
    deviation is the mean tests' business, users that share draws spread the z-scores of many
    rankings.

    >>> from rpdi.simulate.stats import dispersion_p
    >>> round(dispersion_p([1.0] * 100, [2.0] * 100), 6)  # sum z^2 = T: no evidence
    1.0
    >>> round(dispersion_p([2.0] * 100, [2.0] * 100), 6)  # every z^2 twice its mean
    0.000202
    >>> dispersion_p([2.0] * 1000, [2.0] * 1000) < 1e-30  # Chebyshev's: 2000 / 1000^2 = 0.002
    True
    """
    z2, bound = np.asarray(z2, dtype=float), np.asarray(bound, dtype=float)
    T, v = len(z2), float(bound.sum())
    upper = bennett_tail(float(np.minimum(z2, cap).sum()) - T, v, cap)
    lower = bennett_tail(T - float(z2.sum()), v, 1.0)
    return float(min(1.0, 2 * min(upper, lower) + slack))
