"""RBP: the user with constant persistence p."""

from rpdi.usermodels.base import OPEN_UNIT, BrowsingModel, Declared, geometric


class RBP(BrowsingModel):
    """Reads the first document and each next one with probability p.

    E[N] = 1/(1 - p) and E[G] = sum_i r_i p^(i-1), so E[G]/E[N] = (1-p) sum_i r_i p^(i-1) = RBP.
    It is *not* E[G/N], the mean of each user's own rate. Gains are binary with ``rel``, else
    grade/max_rel. With a cutoff k only the top k count (what lies below is taken as nothing).
    Reference: Moffat & Zobel (2008), Section 4.

    Example: b = 1, 1 and p = 0.5: E[G] = 1 + 0.5, E[N] = 2, rate 0.75.
    """

    measure_name = "RBP"
    aggregation = "rate"
    fit_bounds = {"p": OPEN_UNIT}
    declared = Declared("horizon truncation: a user still reading at rank D (the model's horizon) stops "
                        "there, so E[N] = (1 - p^D)/(1 - p)", "exact = closed form / (1 - p^D)",
                        lambda closed, model, ranking: closed / (1 - model.p ** ranking.horizon))

    def step(self, state, at):
        return geometric(self.p, at.gain)
