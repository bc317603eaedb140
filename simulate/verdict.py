"""ONE verdict over every comparison of an experiment (or of one ``simulate`` call).

Exact checks (:mod:`simulate.exact_checks`, zero-variance simulations) must hold. The
stochastic cells (simulated vs exact per ranking and per mean over a run's topics, each engine;
sample vs model variance per run) form one family at family-wise error rate ``alpha``, decided
in two stages (see :func:`verdict` and the README, "How the verdict decides"): a screen by
normal z-tests with Holm's procedure, then, for the screened-out cells only, a confirmation on
an independent random stream with Bennett's inequality (:mod:`simulate.confirm`), which holds
whatever the outcome's skew, and Holm again. Only a confirmed cell is a disagreement.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.stats import chi2

from rpdi.simulate.cells import (Cell, ClosedVsExact, Defined, Exact, Jointly, Mean, Oracle, Reading, Stochastic,
                                 Streams, Variance, ZeroVariance)
from rpdi.simulate.stats import holm, p_values

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


def verdict(cells: list[Cell], alpha: float, confirm: Callable[[Stochastic], float]) -> Verdict:
    """ONE verdict over every comparison. Deterministic cells (closed form vs exact, zero-variance
    simulations) must hold exactly. The stochastic cells (per ranking and per mean over topics,
    each engine, and the variance checks) form one family at family-wise error rate ``alpha``:

    1. screen: two-sided normal p-values of their z-scores, Holm at ``alpha``;
    2. confirm: each screened-out cell is simulated again on an independent stream
       (``confirm(cell)`` returns a Bennett p-value, valid for any skew), Holm at ``alpha``
       over the screened-out cells.

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
    stochastic = [c for c in cells if isinstance(c, Stochastic)]
    flagged = []
    if stochastic:
        p1 = p_values([c.z for c in stochastic])
        flagged = [dataclasses.replace(c, p_screen=float(p)) for c, p, r in zip(stochastic, p1, holm(p1, alpha)) if r]
    marginal = []
    if flagged:
        p2 = np.array([confirm(c) for c in flagged])
        joint = [fisher(p2)] if len(flagged) > 1 else []
        rejected = holm(np.concatenate([p2, joint]), alpha)
        for c, p, r in zip(flagged, p2, rejected):
            (failures if r else marginal).append(dataclasses.replace(c, p_confirm=float(p)))
        if joint and rejected[-1] and marginal:
            failures.append(Jointly(run="all", topic="all", measure="all", cells=len(flagged), p=joint[0]))
    counts = {kind.kind: sum(isinstance(c, kind) for c in cells) for kind in COUNTED}
    counts["screened"] = len(flagged)
    return Verdict(1 if failures else 0, alpha, counts, failures, marginal)


def fisher(p: np.ndarray) -> float:
    """Fisher's combination of independent p-values: P(chi-square with 2n degrees of freedom
    >= -2 sum log p_i). Example: fisher(np.array([0.05] * 10)) is about 7.3e-6."""
    return float(chi2.sf(-2 * np.log(np.maximum(p, 1e-300)).sum(), 2 * len(p)))
