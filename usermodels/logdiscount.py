"""The log-discount user of SDCG@k, DCG@k and nDCG@k."""

import numpy as np

from rpdi.metrics.measures.kernels import EXP_TOP, discount, scaled_exp_gains
from rpdi.usermodels.base import BrowsingModel, geometric


class SDCG(BrowsingModel):
    """Reads on from rank i with probability w_{i+1}/w_i, w_i = 1/log2(i+1), up to rank k.

    The reach probability of rank i is then w_i, so E[G] = DCG@k and E[N] = sum_{i<=k} w_i:
    E[G]/E[N] = SDCG@k (gains grade/max_rel). Reference: Moffat (2013), Section 2.

    Example: b = 1, 1, 0, 0, 0 and k = 5: (1 + 0.63)/(1 + 0.63 + 0.5 + 0.43 + 0.39) = 0.55.
    """

    measure_name = "SDCG"
    aggregation = "rate"
    b = None

    def step(self, state, at):
        go_on = discount(at.rank + 1, self.b) / discount(at.rank, self.b)
        return geometric(go_on if self.before_cutoff(at.rank) else 0.0, at.gain)


class DCG(SDCG):
    """SDCG's user; the expected total gain E[G] = sum_{i<=k} gain_i w_i = DCG@k.

    Gains are the grade (dcg='log2') or 2^grade - 1 ('exp-log2'); with ``b``, Järvelin &
    Kekäläinen's discount (1 up to rank b, 1/log_b(i) after). Reference: Järvelin &
    Kekäläinen (2002). Example: grades 3, 2, 3 with b = 2: 3 + 2 + 3/1.585 = 6.89.
    """

    measure_name = "DCG"
    aggregation = "total"

    def gains(self, grade, view):
        return grade if self.dcg == "log2" else np.exp2(grade) - 1.0


class NDCG(DCG):
    """DCG's user, E[G] divided by E[G] on the topic's ideal ranking = nDCG@k.

    Example: grades 0, 1 against the ideal 1, 0: (1/1.585)/1 = 0.63.
    """

    measure_name = "nDCG"
    normalised = True
    def gains(self, grade, view):
        """As DCG's, over 2^(largest grade - EXP_TOP) when that is positive: the ratio to the ideal
        is unchanged and grades of 1024 and more do not overflow."""
        if self.dcg == "log2":
            return grade
        return scaled_exp_gains(grade, max(view.max_grade - EXP_TOP, 0.0))
