"""The C/W/L users of INST, INSQ and the NERR family (Eqs. 8-11).

Each reads on from rank i with a continuation probability C_i that may depend on the gain met
so far (:func:`metrics.measures.cwl.cwl_continuation`), accrues every document's gain
r_i = grade/max_rel, and is scored by the expected rate of gain E[G]/E[N] (C/W/L's EU). As in
cwl_eval, a user still reading at rank 1000 stops there (its weights are renormalised over
1000 ranks).

Example (NERR8@10, gains 0.5, 1): C_1 = 0.5, C_2 = 0: E[G] = 0.5 + 0.5, E[N] = 1.5: 0.6667.
"""

from rpdi.metrics.measures.cwl import CWL_DEPTH, cwl_continuation
from rpdi.usermodels.base import BrowsingModel, geometric


class _CWL(BrowsingModel):
    aggregation = "rate"
    horizon = CWL_DEPTH
    T = 3.0
    p = 0.8

    def step(self, state, at):
        c = cwl_continuation(self.measure_name, at.rank, at.gain, at.seen, T=self.T, p=self.p,
                             k=self.measure.cutoff)
        return geometric(c, at.gain)


class INST(_CWL):
    measure_name = "INST"


class INSQ(_CWL):
    measure_name = "INSQ"


class NERR8(_CWL):
    measure_name = "NERR8"


class NERR9(_CWL):
    measure_name = "NERR9"


class NERR10(_CWL):
    measure_name = "NERR10"


class NERR11(_CWL):
    measure_name = "NERR11"
