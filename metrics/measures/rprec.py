"""R-precision: precision at depth R (Rprec), and at a multiple of R (trec_eval's Rprec_mult)."""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import div
from rpdi.metrics.measures.registry import JUDGED_ONLY, REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


def r_precision(v: View, rel: float, cutoff: int | None) -> Score:
    """Rprec = Prec@R (trec_eval); Rprec@k = Prec@min(k, R) (Moffat 2013); undefined if R = 0.

    >>> from rpdi.metrics import score
    >>> score("Rprec", [1, 0, 1, 1], R=3)
    0.6666666666666666
    """
    b = v.relevant(rel)
    R = np.broadcast_to(v.R(rel), b.shape[:-1])
    depth = R if cutoff is None else np.minimum(R, cutoff)
    inside = np.arange(1, v.k + 1) <= depth[..., None]
    return Score(div((b * inside).sum(axis=-1), depth))


register(
    MeasureSpec("Rprec", r_precision, (REL, JUDGED_ONLY), "optional",
                "reads R documents (at most k)", "trec_eval Rprec; Moffat 2013", passes_cutoff=True),
)


def rprec_mult(v: View, rel: float, x: float) -> Score:
    """RprecMult(x) = Prec@c, c = floor(x R + 0.9) (trec_eval keeps the 9.x rounding here); 0 when
    c = 0. Documents missing below the ranking count as non-relevant.

    Reference: trec_eval ``Rprec_mult_x``.

    >>> from rpdi.metrics import score
    >>> score("RprecMult(x=2.0)", "$-$-", R=2)
    0.5
    """
    b = v.relevant(rel)
    c = np.floor(x * np.broadcast_to(v.R(rel), b.shape[:-1]) + 0.9)
    inside = v.ranks <= c[..., None]
    return Score(np.nan_to_num(div((b * inside).sum(axis=-1), c)))


register(
    MeasureSpec("RprecMult", rprec_mult,
                (REL, Param("x", float, 1.0, "multiple of R read", lambda x: x >= 0, ">= 0")), "none",
                "reads floor(x R + 0.9) documents", "trec_eval Rprec_mult"),
)
