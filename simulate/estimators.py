"""Estimators with standard errors from simulated sessions.

Sessions are summarised by running sums (``Moments``), so blocks of users combine exactly and in
a fixed order whatever the batch size. For a session, G is the gain accrued, N the documents
inspected (infinite for a user who never stops), r = G/N (0 when N is 0 or infinite).

  total     = mean G,            stderr s_G / sqrt(n)
  depth     = mean N,            stderr s_N / sqrt(n)           (inf if any user never stops)
  cost      = mean cost,         stderr s_C / sqrt(n)
  mean_rate = mean r,            stderr s_r / sqrt(n)           (CLT)
  rate      = mean G / mean N,   stderr by the delta method:
              Var ~ (s_G^2 - 2 R s_GN + R^2 s_N^2) / (n mean_N^2),  R = mean G / mean N

Sums are kept about a shift (the first session's values) against cancellation, and a quantity
that never varied is reported exactly with a standard error of 0; so is ``rate`` when every
user's G/N is the same R (then G - R N, the delta method's linearised quantity, is 0 for all:
G always 0, or a model whose users all read only relevant documents), and when its variance is
0 but for rounding (below 1e-12 of the terms it is the difference of): a standard error made of
rounding noise would turn rounding noise in the estimate into a meaningless z.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.errors import InputError

_VARS = ("g", "n", "c", "r")


class Moments:
    """Running shifted sums over sessions, and the count of users who never stop."""

    def __init__(self):
        self.users = 0
        self.never = 0
        self.shift: dict[str, float] | None = None
        self.s1 = dict.fromkeys(_VARS, 0.0)
        self.s2 = dict.fromkeys(_VARS, 0.0)
        self.gn = 0.0
        self.lo = dict.fromkeys(_VARS, np.inf)
        self.hi = dict.fromkeys(_VARS, -np.inf)

    def add(self, G: np.ndarray, N: np.ndarray, cost: np.ndarray) -> None:
        if G.size == 0:
            return
        finite = np.isfinite(N)
        self.users += G.size
        self.never += int((~finite).sum())
        n = np.where(finite, N, 0.0)  # sums of N and cost are only used when every user stopped
        x = {"g": G, "n": n, "c": np.where(finite, cost, 0.0),
             "r": np.where(n > 0, G / np.where(n > 0, n, 1), 0.0)}
        if self.shift is None:
            self.shift = {k: float(v[0]) for k, v in x.items()}
        d = {k: v - self.shift[k] for k, v in x.items()}
        for k in _VARS:
            self.s1[k] += float(d[k].sum())
            self.s2[k] += float((d[k] * d[k]).sum())
            self.lo[k] = min(self.lo[k], float(x[k].min()))
            self.hi[k] = max(self.hi[k], float(x[k].max()))
        self.gn += float((d["g"] * d["n"]).sum())

    def mean_var(self, k: str) -> tuple[float, float]:
        """Mean and (population) variance of one quantity; exact when it never varied."""
        if self.lo[k] == self.hi[k]:
            return self.lo[k], 0.0
        m = self.s1[k] / self.users
        return self.shift[k] + m, max(self.s2[k] / self.users - m * m, 0.0)

    def estimate(self, aggregation: str) -> tuple[float, float]:
        """(estimate, standard error) of an aggregation."""
        n = self.users
        if n == 0:
            return np.nan, np.nan
        key = {"mean_rate": "r", "total": "g", "depth": "n", "cost": "c"}.get(aggregation)
        if aggregation in ("depth", "cost", "rate") and self.never:
            return (0.0, 0.0) if aggregation == "rate" else (np.inf, np.nan)
        if key is not None:
            mean, var = self.mean_var(key)
            return mean, np.sqrt(var / n)
        if aggregation != "rate":
            raise InputError(f"unknown aggregation {aggregation!r}")
        (mg, vg), (mn, vn) = self.mean_var("g"), self.mean_var("n")
        if mn == 0:
            return 0.0, 0.0
        if self.lo["r"] == self.hi["r"]:  # G = R N for every user: the ratio never varied
            return self.lo["r"], 0.0
        cov = 0.0 if vg == 0 or vn == 0 else self.gn / n - (self.s1["g"] / n) * (self.s1["n"] / n)
        R = mg / mn
        v = vg - 2 * R * cov + R * R * vn
        if v <= 1e-12 * (vg + R * R * vn):  # zero but for rounding (G/N equal to the last bits)
            v = 0.0
        return R, np.sqrt(v / n) / mn


class MixedMoments:
    """A mixture's sessions (:mod:`usermodels.mixture`): one :class:`Moments` per variant, over
    the users who drew it. Its estimate of an aggregation is sum_v (n_v / n) est_v, the variants'
    estimates weighted by the shares of users who drew them, with standard error
    sqrt(sum_v (n_v / n)^2 se_v^2) (the shares taken as given)."""

    def __init__(self, variants: int):
        self.parts = [Moments() for _ in range(variants)]

    @property
    def users(self) -> int:
        return sum(m.users for m in self.parts)

    def estimate(self, aggregation: str) -> tuple[float, float]:
        n = self.users
        drawn = [(m.users / n, *m.estimate(aggregation)) for m in self.parts if m.users] if n else []
        if not drawn:
            return np.nan, np.nan
        return (float(sum(w * e for w, e, _ in drawn)), float(np.sqrt(sum((w * se) ** 2 for w, _, se in drawn))))
