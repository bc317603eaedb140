"""Measures for incomplete judgments, with no browsing model: bpref (and its geometric mean
GMBpref) and infAP, each as trec_eval 10.0 defines it (its m_*.c read as reference).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import div, sum_in_order
from rpdi.metrics.measures.registry import REL, MeasureSpec, register
from rpdi.metrics.view import Score, View


def bpref(v: View, rel: float) -> Score:
    """bpref = (1/R) sum over relevant retrieved r of (1 - min(n_r, R) / min(N, R)), n_r the judged
    non-relevant documents above r, N all judged non-relevant ones (a term is 1 when n_r = 0);
    unjudged documents are skipped. 0 when R = 0, as in trec_eval.

    No browsing model: bpref counts preferences between judged pairs, not a reader's gain.
    Reference: Buckley & Voorhees (SIGIR 2004); trec_eval ``bpref``.

    >>> from rpdi.metrics import score
    >>> score("Bpref", "-$?$", R=2)  # one non-relevant above both relevant, N = 1
    0.0
    """
    b = v.relevant(rel)
    nonrel = ((v.grade < rel) & v.judged).astype(float)
    above = np.cumsum(nonrel, axis=-1) - nonrel
    R = np.broadcast_to(v.R(rel), b.shape[:-1])[..., None]
    N = np.broadcast_to(v.n_judged - v.R(rel), b.shape[:-1])[..., None]
    term = np.where(above > 0, 1.0 - div(np.minimum(above, R), np.minimum(N, R)), 1.0)
    return Score(np.nan_to_num(div(sum_in_order(b * term), R[..., 0])))


register(
    MeasureSpec("Bpref", bpref, (REL,), "none",
                "no browsing model: the share of (relevant, judged non-relevant) pairs ranked in order",
                "Buckley & Voorhees 2004; trec_eval bpref", model=False),
    MeasureSpec("GMBpref", bpref, (REL,), "none",
                "no browsing model: bpref's geometric mean over topics", "trec_eval gm_bpref",
                average="geometric", model=False),
)


INFAP_EPSILON = 0.00001  # trec_eval's smoothing of infAP's precision estimate


def inf_ap(v: View, rel: float) -> Score:
    """infAP = (1/R) sum over relevant retrieved at 0-based rank j of
    1/(j+1) + j/(j+1) (r + n + u)/j (r + e)/(r + n + 2e) (1 at j = 0), with r, n, u the relevant,
    judged non-relevant and pooled-but-unjudged (grade -1) documents above j, e = 0.00001;
    documents outside the pool are skipped. Equals AP when every document is judged.

    No browsing model: an estimator of AP from a sample of judgments.
    Reference: Yilmaz & Aslam (CIKM 2006); trec_eval ``infAP``.

    >>> from rpdi.metrics import score
    >>> score("infAP", "$-$", R=2) == score("AP", "$-$", R=2)
    True
    """
    b = v.relevant(rel)
    nonrel = ((v.grade < rel) & v.judged).astype(float)
    unjudged = (v.pooled & ~v.judged).astype(float)
    r = np.cumsum(b, axis=-1) - b
    n = np.cumsum(nonrel, axis=-1) - nonrel
    u = np.cumsum(unjudged, axis=-1) - unjudged
    j = v.ranks - 1
    estimate = 1 / (j + 1) + j / (j + 1) * div(r + n + u, j) * (r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)
    term = np.where(j == 0, 1.0, estimate)
    return Score(np.nan_to_num(div((b * term).sum(axis=-1), v.R(rel))))


register(
    MeasureSpec("infAP", inf_ap, (REL,), "none",
                "no browsing model: an estimate of AP from sampled judgments",
                "Yilmaz & Aslam 2006; trec_eval infAP", model=False),
)
