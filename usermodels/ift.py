"""Information Foraging Theory's users (Azzopardi, Thomas & Craswell, SIGIR 2018).

C(i) = C1(i) (IFT-C1), C2(i) (IFT-C2) or C1(i) C2(i) (IFT-C1-C2), with
C1(i) = 1 - 1/(1 + b1 e^((T - y_i) R1)): less and less likely to go on as the gain read
y_i = r_1 + ... + r_i nears the goal T, and C2(i) = 1/(1 + b2 e^((A - y_i/i) R2)): less likely
to go on the further the rate of gain y_i/i falls below the rate A expected
(:func:`metrics.measures.ift.ift_continuation`). Each document's gain r_i = grade/max_rel is
accrued as read; the score is the expected rate of gain E[G]/E[N] (C/W/L's EU). As in
cwl_eval, a user still reading at rank 1000 stops there. Reference: Azzopardi, Thomas &
Craswell (2018); cwl_eval's IFTGoalCWLMetric, IFTRateCWLMetric, IFTGoalRateCWLMetric.

Example (IFT-C1 with R1 = 0, b1 = 1): C1 = 1/2 whatever was read, RBP(p=0.5)'s user.

>>> from rpdi.metrics.evaluate import rankings_from_grades
>>> from rpdi.usermodels import exact, model_for
>>> e = exact(model_for("IFT-C1(T=1,b1=1,R1=0)"), rankings_from_grades([1, 0]))
>>> round(float(e.values["depth"][0, 0]), 4), round(float(e.values["rate"][0, 0]), 4)
(2.0, 0.5)
"""

import math

from rpdi.metrics.measures.cwl import CWL_DEPTH
from rpdi.metrics.measures.ift import ift_continuation
from rpdi.usermodels.base import BrowsingModel, geometric
from rpdi.usermodels.cwl import _naive_rate

_GOAL = {"T": (0.01, 20.0), "b1": (1e-3, 1e3), "R1": (0.0, 50.0)}
_RATE = {"A": (0.0, 1.0), "b2": (1e-3, 1e3), "R2": (0.0, 50.0)}


class _Forager(BrowsingModel):
    aggregation = "rate"
    horizon = CWL_DEPTH
    goal = rate = False  # which of C1, C2 the user heeds

    def _goal(self):
        return (self.T, self.b1, self.R1) if self.goal else None

    def _rate(self):
        return (self.A, self.b2, self.R2) if self.rate else None

    def step(self, state, at):
        return geometric(ift_continuation(at.rank, at.seen, self._goal(), self._rate()), at.gain)

    def oracle(self, ranking, grades, ideal) -> float:
        """sum_i V_i r_i / sum_i V_i over ranks 1..horizon, V_{i+1} = V_i C_i, with
        C1 = 1 - 1/(1 + b1 e^((T - y) R1)) and C2 = 1/(1 + b2 e^((A - y/i) R2)) in plain floats
        (Azzopardi, Thomas & Craswell 2018), rank by rank."""
        def c(i, r, seen):
            out = 1.0
            if self.goal:
                out *= 1.0 - 1.0 / (1.0 + self.b1 * math.exp(min((self.T - seen) * self.R1, 700.0)))
            if self.rate:
                out *= 1.0 / (1.0 + self.b2 * math.exp(min((self.A - seen / i) * self.R2, 700.0)))
            return out
        return _naive_rate(ranking, self.horizon, c)


class IFTGoal(_Forager):
    measure_name = "IFT-C1"
    goal = True
    fit_bounds = _GOAL


class IFTRate(_Forager):
    measure_name = "IFT-C2"
    rate = True
    fit_bounds = _RATE


class IFTGoalRate(_Forager):
    measure_name = "IFT-C1-C2"
    goal = rate = True
    fit_bounds = _GOAL | _RATE
