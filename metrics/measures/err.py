"""Expected reciprocal rank (Chapelle et al. 2009), the cascade user."""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import scaled_exp_gains
from rpdi.metrics.measures.registry import MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


def err(v: View, max_rel: float) -> Score:
    """ERR@k = sum_{i<=k} (1/i) R_i prod_{j<i} (1 - R_j), R_i = (2^g_i - 1) / 2^max_rel.

    User (cascade): at each rank is satisfied with probability R_i and stops; ERR is the
    expected reciprocal rank at which that happens. Reference: Chapelle et al. (2009); gdeval.
    Grades above max_rel count as max_rel (gdeval refuses them), so R_i stays a probability.

    >>> from rpdi.metrics import score
    >>> round(score("ERR@3", [4, 0, 0]), 4)
    0.9375
    >>> score("ERR", [5, 3]) == score("ERR", [4, 3])
    True
    """
    sat = scaled_exp_gains(np.minimum(v.grade, max_rel), max_rel)
    before = np.cumprod(np.concatenate([np.ones(sat.shape[:-1] + (1,)), 1 - sat[..., :-1]], axis=-1), axis=-1)
    return Score((sat * before / v.ranks).sum(axis=-1))


register(
    MeasureSpec("ERR", err, (Param("max_rel", float, 4.0, "grade of certain satisfaction",
                                      lambda x: x > 0, "> 0"),), "optional",
                "stops satisfied at rank i with probability (2^g_i - 1)/2^max_rel",
                "Chapelle et al. 2009; gdeval"),
)
