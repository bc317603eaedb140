"""Per-ranking statistics of a simulated sample against the model's exact values.

:func:`mean_stats` gives what the verdict needs of one ranking's sample (the estimate, its
standard error under the model, the outcome's deviation, variance and range for Bennett's
bound); :func:`mean_test` and :func:`variance_test` combine rankings' statistics into the
deviation, variance bound and ranges that :func:`simulate.stats.bennett_p` tests, and
:func:`dispersion` into the squared z-scores the family's dispersion test pools.
"""

from __future__ import annotations

import numpy as np

from rpdi.simulate.estimators import Moments

ZERO_VARIANCE = 1e-12  # a model's per-user variance below this (relative) counts as zero
TRUNCATION = 1e-6  # rate's lower bound: the chance that any user reads past the bound used
SKEW_LIMIT = 1.0  # the dispersion test sums rankings whose B^2/(n var) is at most this


def model_stderr(variance: float, value: float, users: int) -> float | None:
    """The standard error of a mean of ``users`` sessions under the model: sqrt(variance/users),
    exactly 0 where the model's outcome does not vary, None where the variance is unknown.

    This is the estimator's true standard deviation if the simulation follows the model, so
    z tests exactly that; a sample's own estimate of it fails for rare events (a relevant
    document deep in an RBP ranking that 6 users in 4000 are expected to reach)."""
    if not np.isfinite(variance):
        return None
    if variance <= ZERO_VARIANCE * (1 + value ** 2):
        return 0.0
    return float(np.sqrt(variance / users))


def mean_stats(mom: Moments, model, ex, s: int, t: int, ranking) -> dict:
    """What the verdict needs of one ranking's sample: the estimate, its standard error under
    the model and z; and for the bounds, the outcome X whose mean the estimate tests:
    X = G/N (mean_rate), G (total) or (G - R N)/E[N] (rate, R the exact rate: E[X] = 0 exactly,
    and the estimate's error is mean(X) E[N]/mean(N)), each divided by the ideal value for a
    normalised model. ``dev`` = mean(X) - E[X], ``var`` = Var(X) under the model, ``up``/``low``
    how far one user's X can lie above/below E[X], ``msd`` = mean (X - E[X])^2.

    The bounds come from the ranking: a session gains at most max(g_i, 1) at each rank with
    g_i > 0 (never less than the largest G observed, for plug-in models); for rate, X's lower
    bound -R m / E[N] holds unless some user reads past rank m, m the first rank with
    users x P(N > m) <= TRUNCATION (``slack`` carries that chance into the p-value)."""
    if ex.parts:
        return _mixed_stats(mom, model, ex, s, t, ranking)
    agg = model.aggregation
    scale = ex.ideal[t] if model.normalised else 1.0
    value, variance = ex.value[s, t], ex.variance[agg][s, t]
    n = mom.users
    est, sample_se = mom.estimate(agg)
    est = est / scale
    se = model_stderr(variance, value, n)
    if se is None:  # the model has no variance formula here: the sample's
        se = sample_se / scale
    g = ranking.gains
    g_max = max(float(np.where(g > 0, np.maximum(g, 1.0), 0.0).sum()), mom.hi["g"])
    out = {"users": n, "estimate": float(est), "stderr": se, "var": float(variance), "slack": 0.0}
    if agg == "rate":
        R, depth = value * scale, ex.values["depth"][s, t]
        if mom.never or not np.isfinite(depth) or depth == 0:
            return out | {"dev": None}
        reach = ex.reach[s, t]
        beyond = np.flatnonzero(n * reach <= TRUNCATION)  # reach[m] = P(N > m)
        m = int(beyond[0]) if beyond.size else len(reach)
        m = max(m, 1)
        out["slack"] = float(n * reach[m]) if m < len(reach) else 0.0
        mg, mn = _raw_mean(mom, "g"), _raw_mean(mom, "n")
        dev = (mg - R * mn) / depth
        a = mom.shift["g"] - R * mom.shift["n"]
        s1 = mom.s1["g"] - R * mom.s1["n"]
        s2 = mom.s2["g"] - 2 * R * mom.gn + R * R * mom.s2["n"]
        msd = (s2 + 2 * a * s1) / n + a * a
        up, low = g_max / depth, R * m / depth
        msd /= depth ** 2
    else:
        key = {"mean_rate": "r", "total": "g"}.get(agg)
        if key is None:
            return out | {"dev": None}
        mu = value * scale
        dev = _raw_mean(mom, key) - mu
        c = mom.shift[key] - mu
        msd = mom.s2[key] / n + 2 * c * mom.s1[key] / n + c * c
        top = g_max if key == "g" else max(min(g_max, max(1.0, float(g.max(initial=0.0)))), mom.hi["r"])
        up, low = top - mu, mu
    return out | {"dev": float(dev / scale), "up": float(max(up, 0.0) / scale),
                  "low": float(max(low, 0.0) / scale), "msd": float(max(msd, 0.0) / scale ** 2)}


def _mixed_stats(mom, model, ex, s: int, t: int, ranking) -> dict:
    """:func:`mean_stats` of a mixture's sample (:mod:`usermodels.mixture`), from each variant's.
    A user of variant v has the outcome Y = E_v + (X - E_v[X]), X its variant's outcome (rate:
    E_v + (G - R_v N)/E_v[N]): E[Y] is the mixture's value E whatever the shares drawn, and
    Var(Y) = sum_v p_v (Var_v + (E_v - E)^2), the mixture's per-user variance. The deviation is
    the mean of Y - E over all users, the bounds the widest of any variant's shifted by E_v - E;
    all divided by the mixture's ideal value where it is normalised as a whole."""
    scale = 1.0 if ex.ideal is None else float(ex.ideal[t])  # a mixture normalised as a whole
    n, value = mom.users, float(ex.value[s, t])
    se = model_stderr(float(ex.variance[model.aggregation][s, t]), value, n)
    value *= scale  # the variants' values are not divided by it
    out = {"users": n, "estimate": 0.0, "stderr": se, "var": float(ex.variance[model.aggregation][s, t]),
           "slack": 0.0}
    dev = msd = up = low = 0.0
    for v, part in enumerate(mom.parts):
        if not part.users:
            continue
        if ranking.defined[v]:
            x = mean_stats(part, model.inner, ex.parts[v], s, t, ranking.variants[v])
        else:  # its users read nothing: Y = 0
            x = {"estimate": 0.0, "dev": 0.0, "msd": 0.0, "up": 0.0, "low": 0.0, "slack": 0.0}
        if x.get("dev") is None:
            return out | {"dev": None}
        shift = (float(ex.parts[v].value[s, t]) if ranking.defined[v] else 0.0) - value
        share = part.users / n
        out["estimate"] += share * x["estimate"]  # each variant's estimate (normalised by its ideal)
        dev += share * (shift + x["dev"])
        msd += share * (x["msd"] + 2 * shift * x["dev"] + shift ** 2)
        up, low = max(up, shift + x["up"]), max(low, x["low"] - shift)
        out["slack"] += x["slack"]
    out["estimate"] /= scale
    return out | {"dev": dev / scale, "up": up / scale, "low": low / scale, "msd": msd / scale ** 2}


def _raw_mean(mom: Moments, k: str) -> float:
    return mom.shift[k] + mom.s1[k] / mom.users


def variance_test(stats: list[dict]) -> dict | None:
    """The sample's mean square deviations from the exact values against the model's per-user
    variances, summed over rankings: d = sum (msd - var). Each user's Y = (X - E X)^2 has mean
    var and lies in [0, B^2] (B = max(up, low)), so Var(Y) <= E[Y^2] <= B^2 var: the bound on
    d's variance needs no fourth moment. Returns d, that variance bound V and Bennett's ranges,
    or None when no ranking both varies and has bounds."""
    rows = [x for x in stats if x.get("dev") is not None and x["var"] > 0 and x["stderr"]]
    if not rows:
        return None
    b2 = [max(x["up"], x["low"]) ** 2 for x in rows]
    return {"d": sum(x["msd"] - x["var"] for x in rows),
            "V": sum(b * x["var"] / x["users"] for b, x in zip(b2, rows)),
            "up": max(b / x["users"] for b, x in zip(b2, rows)),
            "low": max(x["var"] / x["users"] for x in rows),
            "slack": sum(x["slack"] for x in rows),
            "sample": float(np.mean([x["msd"] for x in rows])), "model": float(np.mean([x["var"] for x in rows]))}


def dispersion(stats: list[dict]) -> dict | None:
    """The rankings' squared z-scores z_t^2 = dev_t^2 n_t / var_t, each of mean exactly 1 when a
    ranking's n_t users are independent draws of the model (dev_t is a mean of n_t independent
    deviations of mean 0 and variance var_t), summed: ``sum_z2`` over ``rankings``. With every
    user's deviation within B_t = max(up, low), E[z_t^4] <= 3 + K_t, K_t = B_t^2/(n_t var_t), so
    ``bound`` = sum (2 + K_t) >= Var(sum z_t^2), whatever the outcome's shape (``slack``: the
    chance that a rate's lower bound fails). Only rankings with K_t <= ``SKEW_LIMIT`` are summed
    (chosen from the model alone, before any user is drawn): where a rare event dominates, z_t is
    far from normal and one ranking would swamp the sum. None when no ranking qualifies."""
    rows = [x for x in stats if x.get("dev") is not None and x["var"] > 0 and x["stderr"]]
    skew = [max(x["up"], x["low"]) ** 2 / (x["users"] * x["var"]) for x in rows]
    rows, skew = [x for x, k in zip(rows, skew) if k <= SKEW_LIMIT], [k for k in skew if k <= SKEW_LIMIT]
    if not rows:
        return None
    return {"rankings": len(rows), "sum_z2": sum(x["dev"] ** 2 * x["users"] / x["var"] for x in rows),
            "bound": sum(2 + k for k in skew), "slack": sum(x["slack"] for x in rows)}


def mean_test(stats: list[dict]) -> dict | None:
    """The mean over rankings of the outcomes' deviations, d = (1/T) sum dev_t, with its variance
    V = sum var_t / (n_t T^2) and Bennett's ranges (a single ranking: T = 1)."""
    rows = [x for x in stats if x.get("dev") is not None]
    if not rows or len(rows) < len(stats):
        return None
    T = len(rows)
    return {"d": sum(x["dev"] for x in rows) / T, "V": sum(x["var"] / x["users"] for x in rows) / T ** 2,
            "up": max(x["up"] / x["users"] for x in rows) / T, "low": max(x["low"] / x["users"] for x in rows) / T,
            "slack": sum(x["slack"] for x in rows)}
