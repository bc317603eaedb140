"""SET's user: Azzopardi's (2014) searcher, whose total gain after i relevant documents is i^beta.

She reads exactly k documents, rank i with probability V(i) = d_i / d_1 of reaching the weight
d_i = i^beta - (i-1)^beta, the gain rank i adds to an all-relevant list's total: so
C(i) = d_{i+1}/d_i for i < k and C(k) = 0 (diminishing returns: V(i) falls as d_i does). She accrues r_i = grade/max_rel; E[G]/E[N] = sum_{i<=k} d_i r_i / sum_{i<=k} d_i =
sum_{i<=k} d_i r_i / k^beta = SET. Reference: Azzopardi (SIGIR 2014); cwl_eval's
SETCWLMetric(beta, k).

Example (beta = 1): d_i = 1, C(i) = 1 below k: P@k's user.

>>> from rpdi.metrics.evaluate import rankings_from_grades
>>> from rpdi.usermodels import exact, model_for
>>> e = exact(model_for("SET(beta=1)@4"), rankings_from_grades([1, 0, 1, 1, 1]))
>>> float(e.values["depth"][0, 0]), float(e.values["rate"][0, 0])
(4.0, 0.75)
"""

from rpdi.usermodels.base import BrowsingModel, geometric


def _added(j: float, beta: float) -> float:
    """d_j = j^beta - (j-1)^beta: the gain rank j adds to an all-relevant list's total."""
    return j ** beta - (j - 1) ** beta


class SET(BrowsingModel):
    measure_name = "SET"
    aggregation = "rate"
    fit_bounds = {"beta": (1e-3, 1.0)}

    def step(self, state, at):
        i = float(at.rank)
        go = _added(i + 1, self.beta) / _added(i, self.beta) if self.before_cutoff(at.rank) else 0.0
        return geometric(go, at.gain)
