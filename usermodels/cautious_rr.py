"""Cautious RR: the user who reads c more documents after the first relevant one."""

import numpy as np

from rpdi.usermodels.base import Branch, BrowsingModel


class CautiousRR(BrowsingModel):
    """Reads to the first relevant document (gain 1) within rank k, then c more, then stops.
    State: 0 while searching, else documents still to read. E[G/N] = 1/(c + first rank).
    Reference: Moffat & Zobel (2008), Section 4.4.

    Example: b = 0, 1, 0 with c = 2: stops at rank 4 with G = 1: 0.25.
    """

    measure_name = "CautiousRR"
    aggregation = "mean_rate"


    def n_states(self, view):
        return self.c + 1

    def step(self, state, at):
        searching = state == 0
        found = searching & (at.gain > 0)
        left = np.where(found, self.c, np.maximum(state - 1, 0))
        cont = np.where(searching & ~found, self.before_cutoff(at.rank), left > 0)
        return [Branch(1.0, np.where(found, 1.0, 0.0), cont, left)]

    def absorbed(self, state, rank):
        return (state == 0) & (self.k is None)
