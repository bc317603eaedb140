"""The Bejeweled player: reads until her benefit or her cost budget is spent.

C(i) = 1 while s_i < T_{i-1} and i < K_{i-1}, else 0, where s_i = r_1 + ... + r_i is the gain
read, r_i = grade/max_rel, and the budgets move after each document by how far its gain lay
from the median: T_i = T + hb d_i, K_i = K + hc d_i, d_i = sum_{j<=i} (r_j - gain_med). The
static player (BPM@K: hb = hc = 0) keeps T and K = the cutoff. She stops at one rank n fixed by
the ranking, so W(i) = 1/n for i <= n, L(n) = 1, and the expected rate of gain E[G]/E[N] is
(1/n) sum_{i<=n} r_i, BPM. As in cwl_eval, a player still reading at rank 1000 stops there.
Reference: Zhang, Liu, Li, Zhang, Xu & Ma (SIGIR 2017); cwl_eval's BPMCWLMetric and
BPMDCWLMetric (Azzopardi, Thomas & Moffat 2019).

Example (BPM(T=2)@10, gains 1, 0, 1, ...): s_3 = 2 reaches T, so n = 3 and BPM = 2/3.

>>> from rpdi.metrics.evaluate import rankings_from_grades
>>> from rpdi.usermodels import exact, model_for
>>> e = exact(model_for("BPM(T=2)@10"), rankings_from_grades([1, 0, 1, 1]))
>>> float(e.values["depth"][0, 0]), round(float(e.values["rate"][0, 0]), 4)
(3.0, 0.6667)
"""

from rpdi.metrics.measures.cwl import CWL_DEPTH
from rpdi.usermodels.base import BrowsingModel, geometric


class BPM(BrowsingModel):
    measure_name = "BPM"
    aggregation = "rate"
    horizon = CWL_DEPTH
    fit_bounds = {"T": (0.01, 20.0)}
    hb = hc = gain_med = 0.0  # the static player's budgets do not move

    def cost_budget(self) -> float:
        """K: the static player's is the cutoff."""
        return self.measure.cutoff

    def step(self, state, at):
        moved = at.seen - at.gain - self.gain_med * (at.rank - 1)  # d_{i-1}
        go = (at.seen < self.T + self.hb * moved) & (at.rank < self.cost_budget() + self.hc * moved)
        return geometric(go.astype(float), at.gain)


class BPMDynamic(BPM):
    measure_name = "BPM-Dynamic"
    fit_bounds = {"T": (0.01, 20.0), "K": (1.0, 100.0), "hb": (-10.0, 10.0), "hc": (-10.0, 10.0)}

    def cost_budget(self) -> float:
        return self.K
