"""AP: Robertson's user, who looks for a random number of relevant documents."""

import numpy as np

from rpdi.usermodels.base import Branch, BrowsingModel


class RobertsonAP(BrowsingModel):
    """Draws a target s ~ U{1..R}, reads until the s-th relevant document and stops there.

    The state is the target s; ``seen`` (relevant documents read so far) tells when it is met.
    Every relevant document read is a gain of 1, so a user who stops at rank i has G/N = s/i = Prec@i and
    E[G/N] = (1/R) sum_i b_i Prec@i = AP. A target beyond the ranking (or beyond the cutoff k:
    only the top k count) is never met: the user reads for ever and G/N = 0. R = 0: undefined.
    Reference: Robertson (2008), "A new interpretation of average precision"; Moffat (2013).

    Example: b = 1, 0, 1 with R = 2: s = 1 stops at rank 1 (1/1), s = 2 at rank 3 (2/3):
    E[G/N] = (1 + 2/3)/2 = 0.8333.
    """

    measure_name = "AP"
    aggregation = "mean_rate"


    def n_states(self, view):
        return int(view.R(self.rel).max(initial=0)) + 1

    def initial(self, view):
        R = np.broadcast_to(view.R(self.rel), view.length.shape)
        s = np.arange(self.n_states(view))
        inside = (s >= 1) & (s <= R[..., None])
        return np.where(inside, 1.0 / np.maximum(R[..., None], 1), 0.0)

    def step(self, state, at):
        met = (at.gain > 0) & (at.seen == state)
        return [Branch(1.0, at.gain, ~met)]

    def absorbed(self, state, rank):
        return True
