"""The C/W/L family of Moffat, Bailey, Scholer & Thomas (2017) and Azzopardi, Mackenzie &
Moffat (2021): INST, INSQ and NERR8-11, each a continuation probability C_i.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.registry import MAX_REL, MIN_REL, MeasureSpec, Param, persistence, register
from rpdi.metrics.view import Score, View


# ir_measures' and cwl_eval's defaults (ir_measures/measures/inst.py, nerr.py; cwl/ruler/measures/
# cwl_inst.py): the same name gives the same number in the three tools
T_DEFAULT = 1.0
NERR10_P = 0.9
_T = Param("T", float, T_DEFAULT, "expected number of relevant documents wanted", lambda x: x > 0, "> 0")
CWL_DEPTH = 1000  # cwl_eval's max_depth: C/W/L weights are renormalised over ranks 1..1000


def cwl_continuation(name: str, i, g, seen, T: float = T_DEFAULT, p: float = NERR10_P, k: int | None = None):
    """C/W/L continuation probability C_i of the INST/INSQ/NERR family at rank(s) ``i``, given
    gains ``g`` at i and ``seen`` = sum of gains at ranks 1..i.

    INST: ((i + T + T_i - 1)/(i + T + T_i))^2 with T_i = T - seen; INSQ: ((i + 2T - 1)/(i + 2T))^2;
    NERR8: 1 - g_i; NERR9: i/(i+1) (1 - g_i); NERR10: p (1 - g_i); NERR11: INSQ's C_i (1 - g_i);
    NERR8 and NERR9 are 0 from rank k on. Reference: Moffat, Bailey, Scholer & Thomas (2017) for
    INST; Azzopardi, Mackenzie & Moffat (ICTIR 2021), Eqs. 8-11, for NERR.
    """
    i = np.asarray(i, dtype=np.float64)
    if name == "INST":
        t = i + T + (T - seen)
        return ((t - 1) / t) ** 2
    insq = ((i + 2 * T - 1) / (i + 2 * T)) ** 2
    c = {"INSQ": insq + 0 * g, "NERR8": 1 - g, "NERR9": i / (i + 1) * (1 - g),
         "NERR10": p * (1 - g), "NERR11": insq * (1 - g)}[name]
    if k is not None:
        c = np.where(i < k, c, 0.0)
    return c


def depth_gains(v: View, max_rel: float | None, min_rel: float = 0.0) -> np.ndarray:
    """The gains r_i = (grade - min_rel)/(max_rel - min_rel) at ranks 1..1000 (cwl_eval's
    max_depth), 0 below the ranking."""
    g = v.scaled(max_rel, min_rel)[..., :CWL_DEPTH]
    return np.pad(g, ((0, 0), (0, 0), (0, CWL_DEPTH - g.shape[-1])))


def expected_rate(c: np.ndarray, g: np.ndarray) -> Score:
    """C/W/L's expected rate of gain sum_i W_i r_i, W_i = V_i / sum_j V_j, V_1 = 1,
    V_{i+1} = V_i C_i, from the continuations ``c`` and gains ``g`` at ranks 1..1000."""
    reach = np.cumprod(np.concatenate([np.ones(c.shape[:-1] + (1,)), c[..., :-1]], axis=-1), axis=-1)
    return Score((reach * g).sum(axis=-1) / reach.sum(axis=-1))


def cwl_rate(v: View, family: str, max_rel: float | None, min_rel: float = 0.0, T: float = T_DEFAULT,
             p: float = NERR10_P, cutoff: int | None = None) -> Score:
    """C/W/L expected rate of gain EU = sum_i W_i r_i, W_i = V_i / sum_j V_j,
    V_i = prod_{j<i} C_j over ranks 1..1000 (cwl_eval's max_depth; nothing is met below the
    ranking); r_i = (grade - min_rel) / (max_rel - min_rel) in [0, 1]. C_i from :func:`cwl_continuation`.

    User: reads on from rank i with probability C_i; EU is the expected rate of gain E[G]/E[N].
    Reference: Moffat, Bailey, Scholer & Thomas (2017); Azzopardi, Mackenzie & Moffat (2021).

    >>> from rpdi.metrics import score
    >>> round(score("NERR10(p=0.5)", [1, 0]), 4)  # C_1 = 0: one document read, gain 1
    1.0
    """
    g = depth_gains(v, max_rel, min_rel)
    i = np.arange(1, CWL_DEPTH + 1)
    return expected_rate(cwl_continuation(family, i, g, np.cumsum(g, axis=-1), T=T, p=p, k=cutoff), g)


register(
    *[MeasureSpec(name, cwl_rate, params, cutoff,
                  f"C/W/L user reading on with probability {rule}", citation, passes_cutoff=True,
                  extra={"family": name})
      for name, params, cutoff, rule, citation in [
          ("INST", (_T, MIN_REL, MAX_REL), "none", "((i+T+T_i-1)/(i+T+T_i))^2, T_i = T - gain so far",
           "Moffat, Bailey, Scholer & Thomas 2017"),
          ("INSQ", (_T, MIN_REL, MAX_REL), "none", "((i+2T-1)/(i+2T))^2",
           "Moffat, Bailey, Scholer & Thomas 2017"),
          ("NERR8", (MIN_REL, MAX_REL), "required", "1 - r_i up to rank k (Eq. 8)",
           "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR9", (MIN_REL, MAX_REL), "required", "i/(i+1) (1 - r_i) up to rank k (Eq. 9)",
           "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR10", (persistence("p", "patience phi", NERR10_P), MIN_REL, MAX_REL), "none",
           "phi (1 - r_i) (Eq. 10)", "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR11", (_T, MIN_REL, MAX_REL), "none", "((i+2T-1)/(i+2T))^2 (1 - r_i) (Eq. 11)",
           "Azzopardi, Mackenzie & Moffat 2021"),
      ]],
)
