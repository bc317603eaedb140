"""Information Foraging Theory's measures (Azzopardi, Thomas & Craswell, SIGIR 2018), as cwl_eval
1.0.12 names them: IFT-C1 (the goal), IFT-C2 (the rate) and IFT-C1-C2 (both).

Each is a C/W/L measure: the user reads on from rank i with a probability C_i that falls as the
gain read, y_i = r_1 + ... + r_i, nears the goal T (C1), and as the rate of gain so far,
y_i / i, falls below the rate A the user expects (C2); b1, b2 are intercepts and R1, R2 how
rationally the user heeds T and A (at 0 not at all: constant C, RBP's user). The score is the
expected rate of gain over cwl_eval's 1000 ranks. cwl_eval gives no defaults; rpdi's are its own.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.cwl import CWL_DEPTH, depth_gains, expected_rate
from rpdi.metrics.measures.registry import MAX_REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View

_POSITIVE = (lambda x: x > 0, "> 0")
_RATIONAL = (lambda x: x >= 0, ">= 0")
GOAL = (Param("T", float, 1.0, "the gain wanted (goal)", *_POSITIVE),
        Param("b1", float, 0.9, "intercept of the goal's continuation", *_POSITIVE),
        Param("R1", float, 1.0, "rationality towards the goal (0: ignores it)", *_RATIONAL))
RATE = (Param("A", float, 0.2, "the rate of gain per document expected"),
        Param("b2", float, 0.9, "intercept of the rate's continuation", *_POSITIVE),
        Param("R2", float, 1.0, "rationality towards the rate (0: ignores it)", *_RATIONAL))


def ift_continuation(i, seen, goal: tuple | None, rate: tuple | None):
    """C_i at rank(s) ``i`` given ``seen`` = y_i, the gain of ranks 1..i: the product of
    C1_i = 1 - 1/(1 + b1 exp((T - y_i) R1)) when ``goal`` = (T, b1, R1) is given and
    C2_i = 1/(1 + b2 exp((A - y_i/i) R2)) when ``rate`` = (A, b2, R2) is given (Azzopardi, Thomas
    & Craswell 2018; written as logistic functions, which do not overflow)."""
    from scipy.special import expit  # only here: scipy costs every start-up a fifth of a second

    i = np.asarray(i, dtype=np.float64)
    c = np.ones(np.broadcast(i, seen).shape)
    if goal is not None:
        T, b1, R1 = goal
        c = c * expit((T - seen) * R1 + np.log(b1))
    if rate is not None:
        A, b2, R2 = rate
        c = c * expit(-(A - seen / i) * R2 - np.log(b2))
    return c


def ift_rate(v: View, max_rel: float | None, T=None, b1=None, R1=None, A=None, b2=None, R2=None) -> Score:
    """IFT = sum_i W_i r_i, W_i = V_i / sum_j V_j, V_1 = 1, V_{i+1} = V_i C_i over ranks 1..1000,
    C_i = C1_i (IFT-C1), C2_i (IFT-C2) or C1_i C2_i (IFT-C1-C2), with
    C1_i = 1 - 1/(1 + b1 e^((T - y_i) R1)), C2_i = 1/(1 + b2 e^((A - y_i/i) R2)), y_i = r_1 + ... + r_i.

    User: reads on while the goal is unmet (C1) and the rate of gain keeps up with A (C2);
    the score is the expected rate of gain E[G]/E[N]. Reference: Azzopardi, Thomas & Craswell
    (SIGIR 2018); cwl_eval's IFTGoalCWLMetric, IFTRateCWLMetric and IFTGoalRateCWLMetric.

    >>> from rpdi.metrics import score
    >>> round(score("IFT-C1(T=1,b1=1,R1=0)", [1, 0]), 4)  # C1 = 1/2 always: RBP(p=0.5)
    0.5
    """
    g = depth_gains(v, max_rel)
    i = np.arange(1, CWL_DEPTH + 1)
    goal = None if T is None else (T, b1, R1)
    rate = None if A is None else (A, b2, R2)
    return expected_rate(ift_continuation(i, np.cumsum(g, axis=-1), goal, rate), g)


register(
    MeasureSpec("IFT-C1", ift_rate, GOAL + (MAX_REL,), "none",
                "reads on with probability 1 - 1/(1 + b1 e^((T - gain so far) R1)) (the goal)",
                "Azzopardi, Thomas & Craswell 2018"),
    MeasureSpec("IFT-C2", ift_rate, RATE + (MAX_REL,), "none",
                "reads on with probability 1/(1 + b2 e^((A - gain so far / i) R2)) (the rate)",
                "Azzopardi, Thomas & Craswell 2018"),
    MeasureSpec("IFT-C1-C2", ift_rate, GOAL + RATE + (MAX_REL,), "none",
                "reads on with the product of the goal's and the rate's probabilities",
                "Azzopardi, Thomas & Craswell 2018"),
)
