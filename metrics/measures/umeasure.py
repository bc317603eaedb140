"""The U-measure (Sakai & Dou, SIGIR 2013), as cwl_eval 1.0.12 names it (U, half-life L)."""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.registry import MAX_REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View

_L = Param("L", float, 1000.0, "text read (in documents) at which the decay reaches 0",
           lambda x: x > 0, "> 0")


def u_measure(v: View, L: float, max_rel: float | None) -> Score:
    """U(L) = sum_i r_i max(0, 1 - pos_i/L), pos_i = i, the offset at the end of rank i's document
    in the trailtext (documents of length 1: cwl_eval's unit costs), normalisation N = 1.

    User: reads the trailtext top-down; the value of what is read decays linearly with how much
    text was read before its end, to nothing at L. Reference: Sakai & Dou (SIGIR 2013), the
    U-measure with normalisation N = 1; cwl_eval's UMeasureCWLMetric(L).

    >>> from rpdi.metrics import score
    >>> score("U(L=4)", [1, 0, 1, 1, 1])  # 3/4 + 1/4 + 0 + 0
    1.0
    """
    return Score((v.scaled(max_rel) * np.maximum(0.0, 1.0 - v.ranks / L)).sum(axis=-1))


register(
    MeasureSpec("U", u_measure, (_L, MAX_REL), "none",
                "reads on with the probability that the linear decay of text read leaves: "
                "(L - i)/(L - i + 1) after rank i",
                "Sakai & Dou 2013"),
)
