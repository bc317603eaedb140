"""HIT@k and Success@k: the user satisfied by the best document of the top k."""

import numpy as np

from rpdi.usermodels.base import Branch, BrowsingModel


class HIT(BrowsingModel):
    """Reads ranks 1..k; a document adds only what it improves on the best seen before it,
    so the total gain is max_{i<=k} r_i = HIT@k (gains grade/max_rel).
    Reference: Moffat (2013), Section 2.

    Example: gains 0, 0.5, 0.25 and k = 3: G = 0 + 0.5 + 0 = 0.5.
    """

    measure_name = "HIT"
    aggregation = "total"

    def step(self, state, at):
        return [Branch(1.0, np.maximum(at.gain - at.best, 0.0), self.before_cutoff(at.rank))]


class Success(HIT):
    """HIT's user with binary gains (grade >= rel): Success@k (trec_eval success_k)."""

    measure_name = "Success"

