"""The C/W/L users of INST, INSQ and the NERR family (Eqs. 8-11).

Each reads on from rank i with a continuation probability C_i that may depend on the gain met
so far (:func:`metrics.measures.cwl.cwl_continuation`), accrues every document's gain
r_i = (grade - min_rel)/(max_rel - min_rel) in [0, 1] (min_rel 0 unless named), and is scored by the expected rate of gain E[G]/E[N] (C/W/L's EU). As in
cwl_eval, a user still reading at rank 1000 stops there (its weights are renormalised over
1000 ranks).

Example (NERR8@10, gains 0.5, 1): C_1 = 0.5, C_2 = 0: E[G] = 0.5 + 0.5, E[N] = 1.5: 0.6667.
"""

from rpdi.metrics.measures.cwl import CWL_DEPTH, NERR10_P, T_DEFAULT, cwl_continuation
from rpdi.usermodels.base import OPEN_UNIT, BrowsingModel, geometric


class _CWL(BrowsingModel):
    aggregation = "rate"
    horizon = CWL_DEPTH
    T = T_DEFAULT
    p = NERR10_P

    def step(self, state, at):
        c = cwl_continuation(self.measure_name, at.rank, at.gain, at.seen, T=self.T, p=self.p,
                             k=self.measure.cutoff)
        return geometric(c, at.gain)


class INST(_CWL):
    measure_name = "INST"
    fit_bounds = {"T": (0.01, 100.0)}

    def oracle(self, ranking, grades, ideal) -> float:
        """INST = sum_i V_i r_i / sum_i V_i over ranks 1..horizon, V_1 = 1, V_{i+1} = V_i C_i,
        C_i = ((i + T + T_i - 1)/(i + T + T_i))^2, T_i = T - r_1 - ... - r_i (Moffat, Bailey,
        Scholer & Thomas 2017), rank by rank."""
        return _naive_rate(ranking, self.horizon,
                           lambda i, r, seen: ((i + 2 * self.T - seen - 1) / (i + 2 * self.T - seen)) ** 2)


class INSQ(_CWL):
    measure_name = "INSQ"
    fit_bounds = {"T": (0.01, 100.0)}

    def oracle(self, ranking, grades, ideal) -> float:
        """INSQ = sum_i V_i r_i / sum_i V_i over ranks 1..horizon, V_1 = 1, V_{i+1} = V_i C_i,
        C_i = ((i + 2T - 1)/(i + 2T))^2 (Moffat, Bailey, Scholer & Thomas 2017), rank by rank."""
        return _naive_rate(ranking, self.horizon, lambda i, r, seen: ((i + 2 * self.T - 1) / (i + 2 * self.T)) ** 2)


class NERR8(_CWL):
    measure_name = "NERR8"


class NERR9(_CWL):
    measure_name = "NERR9"


class NERR10(_CWL):
    measure_name = "NERR10"
    fit_bounds = {"p": OPEN_UNIT}


class NERR11(_CWL):
    measure_name = "NERR11"

    def oracle(self, ranking, grades, ideal) -> float:
        """NERR11 = sum_i V_i r_i / sum_i V_i over ranks 1..horizon, V_1 = 1, V_{i+1} = V_i C_i,
        C_i = ((i + 2T - 1)/(i + 2T))^2 (1 - r_i): INSQ's user, who also stops satisfied with
        probability r_i (Azzopardi, Mackenzie & Moffat 2021, Eq. 11), rank by rank."""
        return _naive_rate(ranking, self.horizon,
                           lambda i, r, seen: ((i + 2 * self.T - 1) / (i + 2 * self.T)) ** 2 * (1.0 - r))


def _naive_rate(ranking, horizon: int, c) -> float:
    """sum_i V_i r_i / sum_i V_i over ranks 1..horizon with V_1 = 1, V_{i+1} = V_i c(i, r_i, seen_i),
    seen_i = r_1 + ... + r_i, the gains r_i the model's (0 past the ranking's end), in plain floats
    rank by rank (the C/W/L rate, written from its definition for the oracles)."""
    v, seen, num, den = 1.0, 0.0, 0.0, 0.0
    for i in range(1, horizon + 1):
        r = float(ranking.gains[i - 1]) if i <= len(ranking.gains) else 0.0
        num, den, seen = num + v * r, den + v, seen + r
        v *= c(i, r, seen)
    return num / den
