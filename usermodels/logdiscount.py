"""The log-discount user of SDCG@k, DCG@k and nDCG@k."""

import math

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

    def oracle(self, ranking, grades, ideal) -> float:
        """SDCG@k = sum_{i<=k} g_i / log2(i + 1) over sum_{i<=k} 1 / log2(i + 1) (Moffat 2013), by
        math.log2 rank by rank."""
        w = [1.0 / math.log2(i + 1) for i in range(1, self.k + 1)]
        g = list(ranking.gains[:self.k]) + [0.0] * (self.k - min(len(ranking.gains), self.k))
        return sum(x * y for x, y in zip(g, w)) / sum(w)

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
    oracle = None  # SDCG's is SDCG's own

    def gains(self, grade, view):
        return grade if self.dcg == "log2" else np.exp2(grade) - 1.0


class NDCG(DCG):
    """DCG's user, E[G] divided by E[G] on the topic's ideal ranking = nDCG@k.

    Example: grades 0, 1 against the ideal 1, 0: (1/1.585)/1 = 0.63.
    """

    measure_name = "nDCG"
    normalised = True

    def oracle(self, ranking, grades, ideal) -> float | None:
        """nDCG@k = sum_{i<=k} gain(g_i) / log2(i + 1) over the same sum on the ideal ordering of the
        topic's judged grades (to rank k, or to its end without a cutoff), gain(g) = g or 2^g - 1
        (Järvelin & Kekäläinen 2002), rank by rank with math.log2 (None: trec_eval's level=gain pairs
        or an ideal of 0, where the closed form alone defines the number)."""
        if self.measure.params["level_gains"]:
            return None
        top = float(ideal[0]) if len(ideal) else 0.0
        shift = max(top - 50.0, 0.0)  # 2^g would overflow past g = 1023; the ratio is unchanged

        def gain(g):
            g = 0.0 if math.isnan(g) else float(g)
            return g if self.dcg == "log2" else 2.0 ** (g - shift) - 2.0 ** -shift

        k = len(grades) if self.k is None else self.k
        width = len(ideal) if self.k is None else min(self.k, len(ideal))
        actual = sum(gain(g) / math.log2(i + 1) for i, g in enumerate(grades[:k], start=1))
        best = sum(gain(max(g, 0.0)) / math.log2(i + 1) for i, g in enumerate(ideal[:width], start=1))
        return actual / best if best > 0 else None
    def gains(self, grade, view):
        """As DCG's, over 2^(largest grade - EXP_TOP) when that is positive: the ratio to the ideal
        is unchanged and grades of 1024 and more do not overflow."""
        if self.dcg == "log2":
            return grade
        return scaled_exp_gains(grade, max(view.max_grade - EXP_TOP, 0.0))
