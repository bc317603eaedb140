"""RR: the user who stops at the first relevant document."""


from rpdi.usermodels.base import Branch, BrowsingModel


class ReciprocalRank(BrowsingModel):
    """Reads down until the first relevant document (gain 1 there) or rank k, then stops.

    E[G/N] = 1/(rank of the first relevant document) = RR@k; 0 if none by rank k. Without a
    cutoff a user who never meets a relevant document reads for ever (G/N = 0).
    Reference: Moffat (2013), Section 2.

    Example: b = 0, 0, 1: the user stops at rank 3 with G = 1: G/N = 1/3.
    """

    measure_name = "RR"
    aggregation = "mean_rate"


    def step(self, state, at):
        found = at.gain > 0
        return [Branch(1.0, at.gain, ~found & self.before_cutoff(at.rank))]

    def absorbed(self, state, rank):
        return self.k is None
