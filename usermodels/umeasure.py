"""The U-measure's reader (Sakai & Dou, SIGIR 2013), as cwl_eval casts it in C/W/L.

She reads rank i with probability V(i) = max(0, 1 - (i - 1)/L), the linear decay at the offset
where rank i's document starts (documents of length 1), so C(i) = V(i + 1)/V(i) =
(L - i)/(L - i + 1) while i < L, and she reads at most ceil(L) documents. She accrues every
document's gain r_i = grade/max_rel; the U-measure is a sum, so her score is the expected total
gain E[G] = sum_i V(i) r_i. Sakai & Dou decay by the offset where a document *ends*,
max(0, 1 - i/L), which no reader who always reads rank 1 has: E[G] exceeds U by
sum_i r_i (V(i) - max(0, 1 - i/L)) (declared). cwl_eval reports her expected rate of gain
E[G]/E[N]. Reference: Sakai & Dou (2013); cwl_eval's UMeasureCWLMetric(L).

Example (L = 4, gains 1, 0, 1): E[G] = 1 + 0.5 = 1.5, U = 0.75 + 0.25 = 1.0, and
E[G] - U = 1/4 + 1/4.

>>> from rpdi.metrics.evaluate import rankings_from_grades
>>> from rpdi.usermodels import exact, model_for
>>> e = exact(model_for("U(L=4)"), rankings_from_grades([1, 0, 1]))
>>> float(e.values["total"][0, 0]), float(e.values["depth"][0, 0])  # E[N] = 1 + 3/4 + 1/2 + 1/4
(1.5, 2.5)
"""

import numpy as np

from rpdi.metrics.measures.cwl import CWL_DEPTH
from rpdi.usermodels.base import BrowsingModel, Declared, geometric


def _start_minus_end(closed, model, ranking):
    """U plus sum_i r_i (max(0, 1 - (i-1)/L) - max(0, 1 - i/L)) over the ranking's ranks."""
    i = np.arange(1, ranking.length + 1)
    step = np.maximum(0.0, 1 - (i - 1) / model.L) - np.maximum(0.0, 1 - i / model.L)
    return closed + float((ranking.gains[:ranking.length] * step).sum())


class UMeasure(BrowsingModel):
    measure_name = "U"
    aggregation = "total"
    horizon = CWL_DEPTH
    fit_bounds = {"L": (1.0, 1000.0)}
    declared = Declared("the reader reaches rank i with the decay where its document starts, "
                        "max(0, 1 - (i-1)/L); Sakai & Dou weigh it by where it ends, max(0, 1 - i/L)",
                        "exact = closed form + sum_i r_i (max(0, 1 - (i-1)/L) - max(0, 1 - i/L))",
                        _start_minus_end)

    def step(self, state, at):
        left = self.L - at.rank
        return geometric(np.where(left > 0, left / (left + 1), 0.0), at.gain)
