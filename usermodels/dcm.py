"""DCM's user, the dependent click model's: a click model of rpdi fit, not a measure.

After a click at rank r the user reads on with probability lambda_r, after a skip always (one
lambda per rank, fitted; the gain the automaton sees is the click). With every lambda = 0 it is
the cascade model's user (RR's). Reference: Guo, Liu & Wang, "Efficient multiple-click models in
web search" (WSDM 2009); Chuklin, Markov & de Rijke, "Click Models for Web Search" (2015).

>>> import numpy as np
>>> from rpdi.usermodels.base import At
>>> user = DCMUser(depth=3)
>>> [float(b.prob) for b in user.step(0, At(1, np.array(1.0), 1.0, 1.0))]  # clicked: on with lambda_1
[0.5, 0.5]
"""

from __future__ import annotations

import numpy as np

from rpdi.usermodels.base import BrowsingModel, geometric


class DCMUser(BrowsingModel):
    """DCM's user: after a click at rank r reads on with probability lambda_r, after a skip
    always (Guo, Liu & Wang 2009)."""

    measure_name, aggregation, rule, citation = "DCM", "total", "after a click reads on with lambda_r", "Guo et al. 2009"

    def __init__(self, depth: int):
        self.k, self.measure = None, None
        self.lam = np.full(depth, 0.5)

    def step(self, state, at):
        return geometric(np.where(at.gain > 0, self.lam[at.rank - 1], 1.0), at.gain)
