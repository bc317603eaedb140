"""The Bejeweled Player Model (Zhang, Liu, Li, Zhang, Xu & Ma, SIGIR 2017): BPM (static) and
BPM-Dynamic, as cwl_eval 1.0.12 and ir_measures name them.

The player reads on while two budgets last: the benefit wanted, T (she stops once the gain read
reaches it), and the cost she will spend, K documents (she stops at rank K). The dynamic player
revises both after every document by how far its gain lay from the median gain. Her stopping
rank n is fixed by the ranking, and the score is the gain per document read, (1/n) sum_{i<=n} r_i
(C/W/L's expected rate of gain: W(i) = 1/n for i <= n), r_i = (grade - min_rel)/(max_rel - min_rel)
in [0, 1]: the
C/W/L reading of the paper's measure that cwl_eval computes (Azzopardi, Thomas & Moffat 2019),
and ir_measures through it; cwl_eval scales the paper's graded benefit to [0, 1].
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.cwl import CWL_DEPTH, depth_gains
from rpdi.metrics.measures.registry import MAX_REL, MIN_REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View

_T = Param("T", float, 1.0, "benefit wanted: the user stops once the gain read reaches T", lambda x: x > 0, "> 0")
_K = Param("K", float, 10.0, "cost budget in documents: the user stops at rank K", lambda x: x > 0, "> 0")
_HB = Param("hb", float, 1.0, "change of T per unit of gain above gain_med")
_HC = Param("hc", float, 1.0, "change of K per unit of gain above gain_med")
_MED = Param("gain_med", float, 0.5, "the median gain r_med", lambda x: 0 <= x <= 1, "in [0, 1]")


def bpm_dynamic(v: View, T: float, K: float, hb: float, hc: float, gain_med: float,
                max_rel: float | None, min_rel: float = 0.0) -> Score:
    """BPM-Dynamic = (1/n) sum_{i<=n} r_i, n the first rank i with s_i >= T_{i-1} or i >= K_{i-1}
    (at most 1000, cwl_eval's depth), s_i = r_1 + ... + r_i, T_i = T + hb d_i, K_i = K + hc d_i,
    d_i = sum_{j<=i} (r_j - gain_med).

    User: reads on while the gain read is short of her benefit budget and the documents read
    short of her cost budget, each budget moving by hb (hc) times how far each document's gain
    lay above the median gain. Reference: Zhang, Liu, Li, Zhang, Xu & Ma (SIGIR 2017), the
    dynamic Bejeweled Player Model; parameters as cwl_eval's BPMDCWLMetric.

    >>> from rpdi.metrics import score
    >>> score("BPM-Dynamic(T=1,K=10,hb=1,hc=1)", [0, 0, 1, 1, 1])  # T_2 = 0, so she stops at 3
    0.3333333333333333
    """
    g = depth_gains(v, max_rel, min_rel)
    i = np.arange(1, CWL_DEPTH + 1)
    seen = np.cumsum(g, axis=-1)
    before = seen - g - gain_med * (i - 1)  # d_{i-1}
    stops = (seen >= T + hb * before) | (i >= K + hc * before)
    stops[..., -1] = True
    n = np.argmax(stops, axis=-1) + 1
    return Score(np.take_along_axis(seen, n[..., None] - 1, axis=-1)[..., 0] / n)


def bpm(v: View, T: float, max_rel: float | None, cutoff: int, min_rel: float = 0.0) -> Score:
    """BPM(T)@K = (1/n) sum_{i<=n} r_i, n = min(K, the first rank where r_1 + ... + r_i >= T).

    User: reads until the gain read reaches T or K documents are read. Reference: Zhang, Liu,
    Li, Zhang, Xu & Ma (SIGIR 2017), the static Bejeweled Player Model; BPM(T, max_rel)@K of
    ir_measures (cwl_eval's BPMCWLMetric(T, K)).

    >>> from rpdi.metrics import score
    >>> score("BPM(T=2)@4", [1, 0, 0, 1, 1])  # the cost budget binds: n = 4
    0.5
    """
    return bpm_dynamic(v, T, float(cutoff), 0.0, 0.0, 0.0, max_rel, min_rel)


register(
    MeasureSpec("BPM", bpm, (_T, MIN_REL, MAX_REL), "required",
                "reads until the gain read reaches T or k documents are read",
                "Zhang, Liu, Li, Zhang, Xu & Ma 2017", passes_cutoff=True),
    MeasureSpec("BPM-Dynamic", bpm_dynamic, (_T, _K, _HB, _HC, _MED, MIN_REL, MAX_REL), "none",
                "reads until the gain read reaches T or K documents are read, T and K moving by "
                "hb and hc times each document's gain above gain_med",
                "Zhang, Liu, Li, Zhang, Xu & Ma 2017"),
)
