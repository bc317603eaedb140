"""The confirmation stage's tail bound (simulate/stats.py: bennett_tail, bennett_p) and the two
tests it is applied to (simulate/sample.py: mean_test, variance_test), against exact tails.

Every stochastic catch of the verdict rests on this stage, and a clean run never exercises it;
so the bound is checked here where the exact answer is known:

- never below the exact tail: binomial sums (upper and lower tails, two-sided), scaled
  centred Poisson sums, and the confirmation's own statistics (the mean over rankings and the
  variance check) built from Bernoulli users, whose exact distributions are enumerated;
- not loose where Bennett's inequality guarantees tightness: its worst case, a term that is
  rarely b and otherwise a little below 0, is in the limit b (N - lambda) for N ~ Poisson(lambda),
  and there the bound is exactly e^k k! / k^k P(N = k) at d = b (k - lambda) (k > lambda an
  integer), at most sqrt(2 pi k) e^(1/(12k)) times the exact tail (Robbins' bound on k!);
- never below the normal exponent exp(-d^2 / 2v), which it approaches as the range b -> 0;
- the dispersion test's p-value (dispersion_p, on each ranking's z^2 as sample.dispersion
  gives it): its one-sided bounds never below the exact tails of the capped and plain sums of
  z^2, its p-value never below the exact chance of one as small, for Bernoulli users.

A bound "slightly wrong" (its variance or range mis-scaled by a few percent, a tail left out,
the mean's variance divided by T instead of T^2) fails at least one of these; see the grids.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, poisson

from rpdi.simulate.sample import dispersion, mean_test, variance_test
from rpdi.simulate.stats import bennett_p, bennett_tail, dispersion_p

REL = 1e-9  # rounding slack of the comparisons with scipy's tails


def robbins_factor(k: int) -> float:
    """sqrt(2 pi k) e^(1/(12k)) >= e^k k! / k^k (Robbins 1955: k! <= sqrt(2 pi k) (k/e)^k e^(1/(12k)))."""
    return math.sqrt(2 * math.pi * k) * math.exp(1 / (12 * k))


# -- the scaled centred Poisson: Bennett's worst case ---------------------------------------

def test_bennett_is_within_robbins_factor_of_the_poisson_tail():
    """S = b (N - lambda), N ~ Poisson(lambda): Var S = b^2 lambda, each of the many small terms
    at most b above its mean. At d = b (k - lambda): exact P(S >= d) = P(N >= k) <= bound <=
    sqrt(2 pi k) e^(1/(12k)) P(N = k) <= the same factor times P(N >= k)."""
    checked = 0
    for lam, b in itertools.product([0.01, 0.5, 3.0, 20.0, 150.0], [0.01, 0.3, 1.0, 7.0]):
        for k in range(math.floor(lam) + 1, math.floor(lam) + 400):
            exact = poisson.sf(k - 1, lam)  # P(N >= k)
            if exact < 1e-280:
                break
            bound = bennett_tail(b * (k - lam), b * b * lam, b)
            assert bound >= exact * (1 - REL), (lam, b, k, bound, exact)
            assert bound <= robbins_factor(k) * poisson.pmf(k, lam) * (1 + REL), (lam, b, k, bound, exact)
            checked += 1
    assert checked > 1000


def test_the_factor_is_sharp_deep_in_the_tail():
    """The bound over the exact tail grows like sqrt(2 pi k) with the threshold: a constant
    factor would not hold, so the test above is the right one (and its slips show as a ratio
    that drifts exponentially, not as sqrt(k))."""
    lam = 5.0
    ratios = {k: bennett_tail(k - lam, lam, 1.0) / poisson.sf(k - 1, lam) for k in (20, 60, 150)}
    for k, r in ratios.items():
        assert 0.5 * math.sqrt(2 * math.pi * k) < r <= robbins_factor(k), (k, r)


# -- binomial sums ---------------------------------------------------------------------------

def test_bennett_bounds_binomial_tails_on_both_sides():
    """K ~ Bin(n, q), S = K - n q: n terms with variance q (1 - q), at most 1 - q above their
    mean and q below it. Upper tail P(K >= k) <= Bennett(k - nq, v, 1 - q), lower tail
    P(K <= k) <= Bennett(nq - k, v, q), two-sided P(|S| >= |d|) <= bennett_p(d, v, 1 - q, q)."""
    checked = 0
    for n, q in itertools.product([1, 7, 40, 1000, 5000], [2e-6, 0.01, 0.3, 0.5, 0.9]):
        v, mean = n * q * (1 - q), n * q
        for k in range(n + 1):
            lower, upper = binom.cdf(k, n, q), binom.sf(k - 1, n, q)  # P(K <= k), P(K >= k)
            if k > mean and upper > 1e-280:
                assert bennett_tail(k - mean, v, 1 - q) >= upper * (1 - REL), (n, q, k)
            if k < mean and lower > 1e-280:
                assert bennett_tail(mean - k, v, q) >= lower * (1 - REL), (n, q, k)
            d = k - mean
            two_sided = binom.sf(math.ceil(mean + abs(d) - 1e-9) - 1, n, q) + binom.cdf(
                math.floor(mean - abs(d) + 1e-9), n, q)
            if two_sided > 1e-280:
                assert bennett_p(d, v, 1 - q, q) >= min(1.0, two_sided) * (1 - REL), (n, q, k)
                assert bennett_p(-d, v, 1 - q, q) == bennett_p(d, v, 1 - q, q)
            checked += 1
    assert checked > 6000


def test_rare_success_is_not_significant_though_its_z_is_large():
    """One success in 5000 draws of a 2e-6 event: z > 9, yet the exact chance of one or more is
    1 %, and Bennett's two-sided p must not go below it (the normal approximation would)."""
    n, q = 5000, 2e-6
    d, v = 1 - n * q, n * q * (1 - q)
    assert d / math.sqrt(v) > 9
    assert bennett_p(d, v, 1 - q, q) >= binom.sf(0, n, q) > 0.0099


def test_both_tails_count_and_slack_adds():
    """Symmetric terms (q = 1/2): the two-sided p is the sum of two equal one-sided bounds, and
    the slack (the chance that a term escaped its lower bound) is added as it is."""
    v, b = 1000 * 0.25, 0.5
    one = bennett_tail(30.0, v, b)
    assert bennett_p(30.0, v, b, b) == 2 * one
    assert bennett_p(30.0, v, b, b, slack=1e-3) == 2 * one + 1e-3
    assert bennett_p(0.0, v, b, b) == 1.0 and bennett_p(300.0, v, b, b, slack=2.0) == 1.0


# -- the normal limit ------------------------------------------------------------------------

def test_bennett_lies_above_the_normal_exponent_and_reaches_it_as_the_range_vanishes():
    """h(u) = (1 + u) ln(1 + u) - u <= u^2 / 2, so Bennett >= exp(-d^2 / 2v) for every range b,
    grows with b, and tends to the normal exponent as b d / v -> 0."""
    for v, z in itertools.product([1e-8, 1.0, 1e6], [0.5, 2.0, 5.0, 12.0]):
        d = z * math.sqrt(v)
        normal = math.exp(-z * z / 2)
        previous = 0.0
        for u in [1e-16, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1.0, 100.0]:  # u = b d / v
            bound = bennett_tail(d, v, u * v / d)
            assert bound >= normal * (1 - 1e-12), (v, z, u, bound, normal)
            assert bound >= previous * (1 - 1e-12), (v, z, u)
            previous = bound
            if u <= 1e-6:  # h(u) >= u^2/2 - u^3/6: bound <= exp(-(d^2 / 2v)(1 - u/3))
                assert bound <= normal * math.exp(z * z * u / 6) * (1 + 1e-12), (v, z, u, bound, normal)


def test_degenerate_arguments():
    assert bennett_tail(0.0, 1.0, 1.0) == 1.0 and bennett_tail(-1.0, 1.0, 1.0) == 1.0
    assert bennett_tail(1.0, 0.0, 1.0) == 0.0  # no variance: S = 0 surely
    assert bennett_tail(1.0, 1.0, 0.0) == 0.0  # no term ever above its mean: S <= 0 surely


# -- the confirmation's statistics, enumerated exactly ---------------------------------------

def _bernoulli_row(users: int, q: float, hits: int, c: float) -> dict:
    """One ranking's statistics as mean_stats gives them, for users whose outcome X is c with
    probability q (else 0) and ``hits`` of whom scored c."""
    return {"users": users, "dev": c * hits / users - c * q, "var": c * c * q * (1 - q), "up": c * (1 - q),
            "low": c * q, "stderr": c * math.sqrt(q * (1 - q) / users), "slack": 0.0,
            "msd": (hits * (c - c * q) ** 2 + (users - hits) * (c * q) ** 2) / users}


def _rows(case, hits):
    return [_bernoulli_row(n, q, h, c) for (n, q, c), h in zip(case, hits)]


def _outcomes(case):
    """Every joint outcome (hits per ranking) with its exact probability."""
    pmfs = [binom.pmf(np.arange(n + 1), n, q) for n, q, _ in case]
    for hits in itertools.product(*(range(n + 1) for n, _, _ in case)):
        yield hits, math.prod(pmf[h] for pmf, h in zip(pmfs, hits))


# rankings as (users, chance q, outcome c): different users, chances and scales
CASES = [[(12, 0.3, 1.0)], [(5, 0.2, 3.0), (9, 0.5, 1.0), (14, 0.05, 2.5)], [(30, 0.01, 1.0), (30, 0.02, 0.5)],
         [(8, 0.6, 2.0), (3, 0.9, 1.0), (6, 0.4, 4.0), (10, 0.15, 0.7)]]


def _user_terms(test, case):
    """The two values (X = 0, X = c) each user of each ranking adds to the statistic ``test``
    sums, from its definition: mean_test adds (X - cq) / (n T), variance_test adds
    ((X - cq)^2 - Var X) / n."""
    T = len(case)
    for n, q, c in case:
        if test is mean_test:
            yield n, q, [(0 - c * q) / (n * T), (c - c * q) / (n * T)]
        else:
            var = c * c * q * (1 - q)
            yield n, q, [((c * q) ** 2 - var) / n, ((c - c * q) ** 2 - var) / n]


def _check_bennett_hypotheses(test, case, exact_variance: bool):
    """Bennett's inequality needs V >= the sum of the terms' variances and every term at most
    ``up`` above and ``low`` below its mean; mean_test knows the variance exactly, so its V is
    that sum; variance_test bounds it."""
    t = test(_rows(case, [0] * len(case)))
    variance = up = low = 0.0
    for n, q, (v0, v1) in _user_terms(test, case):
        mean = (1 - q) * v0 + q * v1
        variance += n * ((1 - q) * (v0 - mean) ** 2 + q * (v1 - mean) ** 2)
        up, low = max(up, v0 - mean, v1 - mean), max(low, mean - v0, mean - v1)
    if exact_variance:
        assert (t["V"], t["up"], t["low"]) == pytest.approx((variance, up, low), rel=1e-12), t
    else:
        assert t["V"] >= variance * (1 - 1e-12), (t, variance)
        assert t["up"] >= up * (1 - 1e-12) and t["low"] >= low * (1 - 1e-12), (t, up, low)


def _check_exactly(test, case):
    """For every joint outcome, the confirmation's p-value of that outcome is at least the exact
    chance of a statistic as far from 0 (|d| at least as large)."""
    table = [(test(_rows(case, hits)), p) for hits, p in _outcomes(case)]
    ds = np.array([t["d"] for t, _ in table])
    ps = np.array([p for _, p in table])
    assert abs(ps.sum() - 1) < 1e-9
    tight = 0.0
    for t, _ in table:
        exact = ps[np.abs(ds) >= abs(t["d"]) - 1e-12].sum()
        p = bennett_p(t["d"], t["V"], t["up"], t["low"], t["slack"])
        assert p >= exact * (1 - REL), (case, t, p, exact)
        tight = max(tight, exact / p)
    return tight


@pytest.mark.parametrize("case", CASES)
def test_mean_over_rankings_bound_holds_exactly(case):
    """mean_test: d = (1/T) sum dev_t over T rankings with different numbers of users, chances
    and outcome scales: V is exactly the variance of d, up and low the largest deviation of one
    user's term; fed to bennett_p they bound the exact chance of a mean deviation as large,
    for every outcome."""
    _check_bennett_hypotheses(mean_test, case, exact_variance=True)
    assert _check_exactly(mean_test, case) > 0.01  # the bound is not vacuous on these small cases


@pytest.mark.parametrize("case", CASES)
def test_variance_check_bound_holds_exactly(case):
    """variance_test: d = sum (msd_t - var_t), msd_t the users' mean square deviation from the
    exact mean; its V (from the range, no fourth moment) is at least the variance of d, up and
    low at least one user's term's deviation; fed to bennett_p they bound the exact chance of
    a deviation as large, for every outcome."""
    _check_bennett_hypotheses(variance_test, case, exact_variance=False)
    assert _check_exactly(variance_test, case) > 0.001


# -- the dispersion test's z^2, enumerated exactly -------------------------------------------

# rankings as (users, chance q, outcome c), each with B^2/(n var) <= 1 (the dispersion test sums
# only those): a rare outcome whose z^2 reaches hundreds, few users with z^2 in {0, 1, 4}, mixes
DISPERSION_CASES = [[(20, 0.05, 1.0), (9, 0.5, 1.0), (12, 0.3, 2.0)], [(8, 0.6, 2.0), (6, 0.4, 4.0), (10, 0.15, 0.7)],
                    [(4, 0.5, 1.0)] * 5, [(25, 0.04, 1.0), (25, 0.04, 1.0)]]


def _dispersion_table(case):
    """(z^2 per ranking, exact probability) of every joint outcome, and the rankings' variance
    bounds, each ranking's term taken as the confirmation takes it (sample.dispersion of it alone)."""
    table, bounds = [], None
    for hits, p in _outcomes(case):
        terms = [dispersion([row]) for row in _rows(case, hits)]
        assert all(t is not None for t in terms), case  # every ranking counts
        table.append(([t["sum_z2"] for t in terms], p))
        bounds = [t["bound"] for t in terms]
    return np.array([z for z, _ in table]), np.array([p for _, p in table]), bounds


@pytest.mark.parametrize("case", DISPERSION_CASES)
def test_dispersion_terms_have_mean_one_and_the_stated_variance_bound(case):
    """What dispersion_p assumes of each ranking's z^2: mean exactly 1 and variance at most its
    bound (2 + B^2/(n var)), checked on the exact distribution."""
    z2, ps, bounds = _dispersion_table(case)
    for t, bound in enumerate(bounds):
        mean = (ps * z2[:, t]).sum()
        assert mean == pytest.approx(1.0, rel=1e-9), (case, t)
        assert (ps * (z2[:, t] - 1) ** 2).sum() <= bound * (1 + REL), (case, t)


@pytest.mark.parametrize("case", DISPERSION_CASES)
@pytest.mark.parametrize("cap", [1.0, 2.0, 16.0])
def test_dispersion_bound_is_never_below_the_exact_tails(case, cap):
    """Upper tail: P(sum min(z^2, cap) - T >= d) <= Bennett(d, sum bound, cap); lower tail:
    P(T - sum z^2 >= d) <= Bennett(d, sum bound, 1), at every outcome's d; and the two-sided
    p-value is valid: P(p-value <= p) <= p for every p it takes."""
    z2, ps, bounds = _dispersion_table(case)
    T, v = len(case), sum(bounds)
    up, low = np.minimum(z2, cap).sum(axis=1) - T, T - z2.sum(axis=1)
    for d in up:
        assert ps[up >= d - 1e-12].sum() <= bennett_tail(d, v, cap) * (1 + REL), (case, cap, d)
    for d in low:
        assert ps[low >= d - 1e-12].sum() <= bennett_tail(d, v, 1.0) * (1 + REL), (case, cap, d)
    pv = np.array([dispersion_p(z, bounds, cap=cap) for z in z2])
    tight = 0.0
    for p in pv:
        exact = ps[pv <= p * (1 + 1e-12)].sum()
        assert exact <= p * (1 + REL), (case, cap, p, exact)
        tight = max(tight, exact / p)
    assert tight > 1e-3  # not vacuous


def test_the_exact_tails_see_a_range_too_small():
    """The cap is the upper tail's range: Bennett's bound with range 1 instead of 16 falls below
    the exact tail of the capped sum (two rankings of 25 users, each a hit with chance 0.04:
    k hits make z^2 = (k - 1)^2 / 0.96, 16.7 at k = 5), so the test above can fail."""
    case = DISPERSION_CASES[3]
    z2, ps, bounds = _dispersion_table(case)
    up = np.minimum(z2, 16.0).sum(axis=1) - len(case)
    assert any(ps[up >= d - 1e-12].sum() > bennett_tail(d, sum(bounds), 1.0) for d in up)
