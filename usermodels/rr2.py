"""RR2: the sceptical user who wants a second relevant document."""

import numpy as np

from rpdi.usermodels.base import Branch, BrowsingModel


class RR2(BrowsingModel):
    """Reads until the second relevant document (gain 1 there) or rank k. State: relevant
    documents found so far (0 or 1). E[G/N] = 1/(rank of the second relevant document).
    Reference: Moffat & Zobel (2008), Section 4.4.

    Example: b = 0, 1, 0, 1: stops at rank 4 with G = 1: 0.25.
    """

    measure_name = "RR2"
    aggregation = "mean_rate"


    def n_states(self, view):
        return 2

    def step(self, state, at):
        relevant = at.gain > 0
        done = relevant & (state == 1)
        return [Branch(1.0, np.where(done, 1.0, 0.0), ~done & self.before_cutoff(at.rank),
                       np.where(relevant, 1, state))]

    def absorbed(self, state, rank):
        return self.k is None
