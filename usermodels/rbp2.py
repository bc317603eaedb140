"""RBP with two persistences: the user whose patience depends on what was just read."""

import numpy as np

from rpdi.usermodels.base import OPEN_UNIT, BrowsingModel, geometric


class RBP2(BrowsingModel):
    """Reads on with probability p1 after a relevant document and p2 after another.

    E[G]/E[N] is the expected rate of gain, the measure RBP2(p1, p2); with p1 = p2 = p it is
    RBP(p). Reference: Moffat & Zobel (2008), Section 4.4.

    Example: b = 1, 0 with p1 = 0.5, p2 = 0.5: E[G] = 1, E[N] = 2: 0.5.
    """

    measure_name = "RBP2"
    aggregation = "rate"
    fit_bounds = {"p1": OPEN_UNIT, "p2": OPEN_UNIT}


    def step(self, state, at):
        return geometric(np.where(at.gain > 0, self.p1, self.p2), at.gain)
