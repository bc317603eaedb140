"""Multiple z-tests: two-sided p-values and Holm's step-down correction."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


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
    p = np.asarray(p, dtype=float)
    m = p.size
    order = np.argsort(p)
    passed = p[order] <= alpha / (m - np.arange(m))
    stop = m if passed.all() else int(np.argmin(passed))
    rejected = np.zeros(m, dtype=bool)
    rejected[order[:stop]] = True
    return rejected
