"""ERR: the cascade user who stops once satisfied."""

import re

import numpy as np

from rpdi.metrics.measures.kernels import scaled_exp_gains
from rpdi.usermodels.base import Branch, BrowsingModel


class ERR(BrowsingModel):
    """At rank i is satisfied with probability R_i = (2^g_i - 1)/2^max_rel and stops (gain 1);
    otherwise reads on, up to rank k.

    E[G/N] = E[satisfied/N] = sum_i (1/i) R_i prod_{j<i}(1 - R_j) = ERR@k. The C/W/L rate of the
    same cascade, E[G]/E[N], is a different number (NERR, Azzopardi et al. 2021, Eq. 8).
    Reference: Chapelle, Metzler, Zhang & Grinspan (2009).

    Example: grades 4, 0 with max_rel 4: R_1 = 15/16; ERR = 15/16 = 0.9375.
    """

    measure_name = "ERR"
    aggregation = "mean_rate"

    def oracle(self, ranking, grades, ideal) -> float:
        """ERR@k = sum_{i<=k} (1/i) R_i prod_{j<i} (1 - R_j), R_i = (2^min(g_i, max) - 1) / 2^max
        for grades g_i, max the ``max_rel`` the measure names, else 4 (the paper's grades 0-4;
        Chapelle, Metzler, Zhang & Grinspan 2009), rank by rank."""
        top = self.max_rel if re.search(r"\bmax_rel\s*=", self.measure.text) else 4.0
        total, reach = 0.0, 1.0
        for i, g in enumerate(np.nan_to_num(grades[:self.k]), start=1):
            r = (2.0 ** min(float(g), top) - 1.0) / 2.0 ** top
            total, reach = total + reach * r / i, reach * (1.0 - r)
        return total

    def gains(self, grade, view):
        return scaled_exp_gains(np.minimum(grade, self.max_rel), self.max_rel)  # as metrics.measures.err.err

    def step(self, state, at):
        return [Branch(at.gain, 1.0, False), Branch(1 - at.gain, 0.0, self.before_cutoff(at.rank))]

    def absorbed(self, state, rank):
        return self.k is None
