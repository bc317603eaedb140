"""Precision and recall: the share of the documents read that are relevant, and of the
relevant documents that are read; their F combination, fallout, and trec_eval's relative and
set variants (``relative_P``, ``set_P``, ``set_recall``, ``set_F``, ``set_map``).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import div
from rpdi.metrics.measures.registry import JUDGED_ONLY, REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


def precision(v: View, rel: float) -> Score:
    """P@k = (1/k) sum_{i<=k} b_i.

    User: reads exactly k documents and reports the fraction that were relevant.
    Reference: trec_eval ``P_k``; Moffat (2013) Prec@k.

    >>> from rpdi.metrics import score
    >>> score("P@4", [1, 0, 1, 0, 1])
    0.5
    """
    num = v.relevant(rel).sum(axis=-1)
    return Score(num / v.k, num=num, den=np.full(num.shape, float(v.k)))


register(
    MeasureSpec("P", precision, (REL, JUDGED_ONLY), "required",
                "reads exactly k documents", "trec_eval P_k; Moffat 2013", micro=True),
)


def recall(v: View, rel: float) -> Score:
    """R@k = (1/R) sum_{i<=k} b_i; undefined when R = 0.

    User: reads k documents and counts what share of all relevant documents they met.
    Reference: trec_eval ``recall_k``.

    >>> from rpdi.metrics import score
    >>> score("R@2", [1, 0, 1], R=4)
    0.25
    """
    num = v.relevant(rel).sum(axis=-1)
    den = np.broadcast_to(v.R(rel), num.shape)
    return Score(div(num, den), num=num, den=den)


register(
    MeasureSpec("R", recall, (REL, JUDGED_ONLY), "required",
                "reads k documents, counts the share of all relevant ones met", "trec_eval recall_k",
                micro=True),
)


def set_precision(v: View, rel: float, relative: bool = False) -> Score:
    """SetP = relevant retrieved / retrieved, over the whole ranking (0 when nothing is retrieved);
    ``relative=True``: SetRelP (ir_measures' ``SetP(relative=True)``).

    >>> from rpdi.metrics import score
    >>> score("SetP", [1, 0, 0, 0]), score("SetP(relative=True)", [1, 0, 0, 0], R=1)
    (0.25, 1.0)
    """
    if relative:
        return set_relative_precision(v, rel)
    num = v.relevant(rel).sum(axis=-1)
    den = v.length.astype(float)
    return Score(np.nan_to_num(div(num, den)), num=num, den=den)


register(
    MeasureSpec("SetP", set_precision,
                (REL, Param("relative", bool, False, "over the best SetP possible (SetRelP)"), JUDGED_ONLY), "none",
                "reads the whole retrieved set", "trec_eval set_P", micro=True),
)


def set_recall(v: View, rel: float) -> Score:
    """SetR = relevant retrieved / R over the whole ranking; undefined when R = 0.

    >>> from rpdi.metrics import score
    >>> score("SetR", [1, 0, 1, 0], R=4)
    0.5
    """
    return recall(v, rel)


register(
    MeasureSpec("SetR", set_recall, (REL,), "none",
                "reads the whole retrieved set", "trec_eval set_recall", micro=True),
)


def _f(p, r, b2):
    return np.where((p > 0) | (r > 0), div((1 + b2) * p * r, b2 * p + r), np.where(np.isnan(r), np.nan, 0.0))


_BETA = Param("beta", float, 1.0, "weight of recall against precision", lambda x: x > 0, "> 0")


def f_measure(v: View, rel: float, beta: float) -> Score:
    """F_beta@k = (1 + beta^2) P@k R@k / (beta^2 P@k + R@k); 0 when both are 0, undefined if R = 0.

    Reference: van Rijsbergen (1979); the seeds' product reference page.

    >>> from rpdi.metrics import score
    >>> round(score("F(beta=1)@4", [1, 0, 1, 0], R=2), 4)
    0.6667
    """
    return Score(_f(precision(v, rel).value, recall(v, rel).value, beta * beta))


register(
    MeasureSpec("F", f_measure, (REL, _BETA), "required",
                "reads k documents; harmonic mean of P@k and R@k", "van Rijsbergen 1979"),
)


def set_f(v: View, rel: float, beta: float, beta2: float | None) -> Score:
    """SetF_beta: F_beta of SetP and SetR over the whole ranking; ``beta2`` gives beta^2 itself
    (trec_eval's set_F parameter, so that its value is used exactly).

    >>> from rpdi.metrics import score
    >>> round(score("SetF", [1, 0, 1, 0], R=2), 4)
    0.6667
    """
    b2 = beta * beta if beta2 is None else beta2
    return Score(_f(set_precision(v, rel).value, set_recall(v, rel).value, b2))


register(
    MeasureSpec("SetF", set_f, (REL, _BETA, Param("beta2", float, None, "beta^2 itself, overriding beta "
                                                     "(trec_eval's set_F parameter)", lambda x: x > 0,
                                                     "> 0", optional=True), JUDGED_ONLY), "none",
                "reads the whole retrieved set; harmonic mean of SetP and SetR", "trec_eval set_F"),
)


def fallout(v: View, rel: float) -> Score:
    """Fallout@k = judged non-relevant documents in the top k / all judged non-relevant ones.

    >>> from rpdi.metrics import score
    >>> score("Fallout@3", [0, 1, 0], judged_grades=[1, 0, 0, 0, 0])
    0.5
    """
    nonrel = ((v.grade < rel) & v.judged).sum(axis=-1).astype(float)
    den = np.broadcast_to(v.n_judged - v.R(rel), nonrel.shape).astype(float)
    return Score(div(nonrel, den), num=nonrel, den=den)


register(
    MeasureSpec("Fallout", fallout, (REL,), "required",
                "reads k documents, counts the share of judged non-relevant ones met",
                "Salton & McGill 1983", micro=True),
)


def relative_precision(v: View, rel: float) -> Score:
    """RelP@k = relevant in the top k / min(k, R): P@k over the best P@k possible; 0 if R = 0.

    Reference: trec_eval ``relative_P_k``.

    >>> from rpdi.metrics import score
    >>> score("RelP@4", "$--$", R=2)
    1.0
    """
    return _relative(v, rel, v.k)


register(
    MeasureSpec("RelP", relative_precision, (REL,), "required",
                "reads exactly k documents; P@k over the best P@k possible", "trec_eval relative_P"),
)


def set_relative_precision(v: View, rel: float) -> Score:
    """SetRelP = relevant retrieved / min(retrieved, R); 0 if either is 0.

    Reference: trec_eval ``set_relative_P``.

    >>> from rpdi.metrics import score
    >>> score("SetRelP", "$--", R=2)
    0.5
    """
    return _relative(v, rel, v.length)


register(
    MeasureSpec("SetRelP", set_relative_precision, (REL, JUDGED_ONLY), "none",
                "reads the whole retrieved set; SetP over the best SetP possible", "trec_eval set_relative_P"),
)


def _relative(v: View, rel: float, depth) -> Score:
    """Relevant documents read over the most there could be at that ``depth``: min(depth, R)."""
    return Score(np.nan_to_num(div(v.relevant(rel).sum(axis=-1), np.minimum(depth, v.R(rel)))))


def set_ap(v: View, rel: float) -> Score:
    """SetAP = SetP x SetR, the average precision of an unranked retrieved set.

    Reference: trec_eval ``set_map``.

    >>> from rpdi.metrics import score
    >>> score("SetAP", "$-", R=2)
    0.25
    """
    p = set_precision(v, rel)  # one division, as trec_eval: (r * r) / (n * R)
    return Score(np.nan_to_num(div(p.num * p.num, p.den * v.R(rel))))


register(
    MeasureSpec("SetAP", set_ap, (REL, JUDGED_ONLY), "none",
                "reads the whole retrieved set; SetP x SetR", "trec_eval set_map"),
)
