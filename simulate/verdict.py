"""ONE verdict over every comparison of an experiment (or of one ``simulate`` call).

Exact checks (:mod:`simulate.exact_checks`, zero-variance simulations) must hold. The
stochastic cells (simulated vs exact per ranking and per mean over a run's topics, each engine;
sample vs model variance per run; one dispersion test of every simulated ranking's z-score)
form one family at family-wise error rate ``alpha``, decided in two stages (see :func:`verdict`
and docs/verdict.md, "How the verdict decides"): a screen by normal z-tests with Holm's procedure,
then, for the screened-out cells only, a confirmation on an independent random stream with
Bennett's inequality (:mod:`simulate.confirm`), which holds whatever the outcome's skew (for
the dispersion test, on the rankings' z^2 capped at 16: :func:`simulate.stats.dispersion_p`), and
Holm again, with one more hypothesis: that the screened-out cells agree together. Only a
confirmed cell, or screened-out cells that disagree together, is a disagreement.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.stats import chi2

from rpdi.simulate.cells import (Cell, ClosedVsExact, Defined, Dispersion, Exact, Jointly, Mean, Oracle, Reading,
                                 Spread, Stochastic, Streams, Variance, ZeroVariance)
from rpdi.simulate.stats import dispersion_p, holm, p_values

ALPHA = 0.01  # family-wise error rate of the stochastic comparisons
COUNTED = (Reading, Streams, Defined, Oracle, ClosedVsExact, ZeroVariance, Mean, Variance)  # in this order


@dataclass(frozen=True)
class Verdict:
    """``status`` 0 (agree) or 1 (disagree) at family-wise error rate ``alpha``; ``counts`` of
    the cells of each kind and of those screened out; the failing cells, and the marginal ones
    (screened out, not confirmed)."""

    status: int
    alpha: float
    counts: dict[str, int]
    failures: list[Cell]
    marginal: list[Cell]

    def as_dict(self) -> dict:
        """The JSON form (verdict.json)."""
        return {"status": self.status, "alpha": self.alpha, "counts": self.counts,
                "failures": [c.as_dict() for c in self.failures], "marginal": [c.as_dict() for c in self.marginal]}


def verdict(cells: list[Cell], alpha: float,
            confirm: Callable[[Stochastic | Dispersion], float | list[dict]]) -> Verdict:
    """ONE verdict over every comparison. Deterministic cells (closed form vs exact, zero-variance
    simulations) must hold exactly. The stochastic cells (per ranking and per mean over topics,
    each engine, the variance checks, and one dispersion test of the z-scores of every simulated
    ranking, pooled from the runs' Dispersion cells: :func:`spread`) form one family at
    family-wise error rate ``alpha``:

    1. screen: two-sided normal p-values of their z-scores, Holm at ``alpha``;
    2. confirm: each screened-out cell is simulated again on an independent stream
       (``confirm(cell)`` returns a Bennett p-value, valid for any skew; for the dispersion test
       every run's Dispersion cell is re-simulated, ``confirm(part)`` returning its rankings'
       z^2, and their pooled sums tested by Bennett's bound too, the upper tail on the z^2
       capped at 16, valid for any shape: :func:`simulate.stats.dispersion_p`), Holm at
       ``alpha`` over the screened-out cells.

    Many marginal cells (screened out, not confirmed one by one) are not waved through: with two
    or more screened-out cells, stage 2's Holm family holds one more hypothesis, that every
    screened-out cell agrees, tested by Fisher's combination of their confirmation p-values
    (-2 sum log p against chi-square with 2F degrees of freedom; valid, as the p-values are
    independent and valid given the screened set). Rejected while some cells stay marginal, it is
    a failure of its own (:class:`simulate.cells.Jointly`): the marginal cells disagree together,
    as a weak bug seen on many rankings does when the confirmation lacks power for each alone.
    Marginal cells whose confirmations are together unremarkable (a rare event met by a user or
    two on a few rankings) leave the exit status at 0.

    A false alarm needs stage 2 to reject a true hypothesis; given the screened set (a function
    of stage 1's stream only) Holm on valid p-values rejects one with probability at most alpha,
    so the family-wise error rate is at most alpha whatever stage 1's accuracy.
    Each failure is a cell with its numbers, each marginal cell says what would settle it."""
    failures = [c for c in cells if isinstance(c, Exact) and not c.ok]
    parts = [c for c in cells if isinstance(c, Dispersion)]
    pooled = spread(parts)
    stochastic = [c for c in cells if isinstance(c, Stochastic)] + ([pooled] if pooled is not None else [])
    flagged = []
    if stochastic:
        p1 = p_values([c.z for c in stochastic])
        flagged = [dataclasses.replace(c, p_screen=float(p)) for c, p, r in zip(stochastic, p1, holm(p1, alpha)) if r]
    marginal = []
    if flagged:
        p2 = np.array([spread_p([t for p in parts for t in confirm(p)]) if isinstance(c, Spread) else confirm(c)
                       for c in flagged])
        joint = [fisher(p2)] if len(flagged) > 1 else []
        rejected = holm(np.concatenate([p2, joint]), alpha)
        for c, p, r in zip(flagged, p2, rejected):
            (failures if r else marginal).append(dataclasses.replace(c, p_confirm=float(p)))
        if joint and rejected[-1] and marginal:
            failures.append(Jointly(run="all", topic="all", measure="all", cells=len(flagged), p=joint[0]))
    counts = {kind.kind: sum(isinstance(c, kind) for c in cells) for kind in COUNTED}
    counts["dispersion"] = 0 if pooled is None else pooled.rankings
    counts["screened"] = len(flagged)
    return Verdict(1 if failures else 0, alpha, counts, failures, marginal)


def spread(parts: list[Dispersion]) -> Spread | None:
    """The family's dispersion test pooled from the runs' Dispersion cells (None: no ranking
    varies): sum z^2 against its mean, the number of rankings, over the bound on its standard
    deviation."""
    parts = [p for p in parts if p.rankings]
    if not parts:
        return None
    n, s, v = sum(p.rankings for p in parts), sum(p.sum_z2 for p in parts), sum(p.bound for p in parts)
    return Spread(run="all", topic="all", measure="all", engine="all", rankings=n, sum_z2=s, bound=v,
                  slack=sum(p.slack for p in parts), z=(s - n) / np.sqrt(v))


def spread_p(terms: list[dict]) -> float:
    """The confirmation's p-value of the family's dispersion test from every run's terms (one
    per ranking: ``z2``, its variance ``bound``, ``slack``), valid whatever the outcomes' shape:
    :func:`simulate.stats.dispersion_p` (1: nothing to test)."""
    if not terms:
        return 1.0
    return dispersion_p([t["z2"] for t in terms], [t["bound"] for t in terms], sum(t["slack"] for t in terms))


def fisher(p: np.ndarray) -> float:
    """Fisher's combination of independent p-values: P(chi-square with 2n degrees of freedom
    >= -2 sum log p_i). Example: fisher(np.array([0.05] * 10)) is about 7.3e-6."""
    return float(chi2.sf(-2 * np.log(np.maximum(p, 1e-300)).sum(), 2 * len(p)))
