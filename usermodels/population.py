"""A population of RBP users whose persistence is drawn per user from a Beta distribution."""

import numpy as np

from rpdi.usermodels.base import geometric
from rpdi.usermodels.rbp import RBP

NODES = 64  # Gauss-Jacobi nodes: exact for rankings up to depth 2 x 64 - 1


class BetaRBP(RBP):
    """Each user draws a persistence p ~ Beta(a, b) and browses as RBP(p); a document's gain
    is weighted by 1 - p = 1/E[N | p], so that the expected total gain is the population's
    mean of each user's expected rate, E_p[RBP(p)] = integral of RBP(p) Beta(p; a, b) dp.

    The exact evaluator takes the population at the 64 Gauss-Jacobi nodes of Beta(a, b) (the
    types and shares matching its first 128 moments: exact for rankings up to depth 127, as
    RBP(p) is then a polynomial in p); the simulators draw p from Beta(a, b) itself.
    Reference: Carterette, Kanoulas & Yilmaz (CIKM 2011).

    Example: one relevant document at rank 1 and a, b = 1, 1: E[1 - p] = 0.5.
    """

    measure_name = "BetaRBP"
    aggregation = "total"
    fit_bounds = {"a": (0.05, 200.0), "b": (0.05, 200.0)}
    declared = None  # RBP's horizon is RBP's own

    def n_states(self, view):
        return NODES

    def state_values(self, view):
        return self._nodes()[0]

    def initial(self, view):
        return np.broadcast_to(self._nodes()[1], view.length.shape + (NODES,)).copy()

    def _nodes(self):
        from scipy.special import roots_jacobi  # here: scipy.special costs 0.3 s of every start-up

        x, w = roots_jacobi(NODES, self.b - 1, self.a - 1)  # weight (1-x)^(b-1) (1+x)^(a-1)
        return (1 + x) / 2, w / w.sum()

    def draw_start(self, rng, users, start, values):
        return rng.beta(self.a, self.b, users)

    def step(self, state, at):
        return geometric(state, (1 - state) * at.gain)
