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

from rpdi.simulate.cells import Cell, ClosedVsExact, Defined, Exact, Mean, Oracle, Reading, Stochastic, Streams, Variance, \
    ZeroVariance
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

    A false alarm needs stage 2 to reject a true hypothesis; given the screened set (a function
    of stage 1's stream only) Holm on independent valid p-values rejects one with probability at
    most alpha, so the family-wise error rate is at most alpha whatever stage 1's accuracy.
    Each failure is a cell with its numbers, each marginal cell (screened out, not confirmed)
    says what would settle it."""
    failures = [c for c in cells if isinstance(c, Exact) and not c.ok]
    stochastic = [c for c in cells if isinstance(c, Stochastic)]
    flagged = []
    if stochastic:
        p1 = p_values([c.z for c in stochastic])
        flagged = [dataclasses.replace(c, p_screen=float(p)) for c, p, r in zip(stochastic, p1, holm(p1, alpha)) if r]
    marginal = []
    if flagged:
        p2 = np.array([confirm(c) for c in flagged])
        for c, p, r in zip(flagged, p2, holm(p2, alpha)):
            (failures if r else marginal).append(dataclasses.replace(c, p_confirm=float(p)))
    counts = {kind.kind: sum(isinstance(c, kind) for c in cells) for kind in COUNTED}
    counts["screened"] = len(flagged)
    return Verdict(1 if failures else 0, alpha, counts, failures, marginal)
