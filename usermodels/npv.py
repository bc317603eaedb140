"""The NPV user: RBP's, with persistence p = 1/(1 + rate).

C(i) = 1/(1 + rate): each next document is worth what money due one period later is worth at
interest ``rate``, and the user reads on with that probability. E[G]/E[N] = (1 - p) sum_i r_i
p^(i-1) = NPV, r_i = grade/max_rel. Reference: Azzopardi, Thomas & Moffat (SIGIR 2019),
cwl_eval's NPVCWLMetric(rate); Moffat & Zobel (2008) for RBP.

Example (rate = 1, so p = 1/2; gains 1, 1): E[G] = 1.5, E[N] = 2, rate of gain 0.75.

>>> from rpdi.metrics.evaluate import rankings_from_grades
>>> from rpdi.usermodels import exact, model_for
>>> e = exact(model_for("NPV(rate=1)"), rankings_from_grades([1, 1]))
>>> round(float(e.values["total"][0, 0]), 4), round(float(e.values["depth"][0, 0]), 4)
(1.5, 2.0)
"""

from rpdi.usermodels.rbp import RBP


class NPV(RBP):
    measure_name = "NPV"
    fit_bounds = {"rate": (1e-4, 1e4)}

    @property
    def p(self) -> float:
        return 1.0 / (1.0 + self.rate)
