"""Discounted cumulative gain: DCG, nDCG, SDCG (Moffat 2013), CG and SN-DCG."""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import (EXP_TOP, discount, div, ideal_gains, judged_gains, log2_discount,
                                           parse_gains, scaled_exp_gains)
from rpdi.metrics.measures.registry import JUDGED_ONLY, LEVEL_GAINS, MAX_REL, MIN_REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


_DCG = Param("dcg", str, "log2", "'log2': gain g (trec_eval); 'exp-log2': gain 2^g - 1",
             lambda x: x in ("log2", "exp-log2"), "'log2' or 'exp-log2'")
EXP_GRADE_LIMIT = 1024  # 2^1024 is beyond the largest float


def _gains(v: View, dcg: str) -> np.ndarray:
    """The grade (dcg='log2') or 2^grade - 1; OverflowError where 2^grade passes float's range."""
    if dcg != "log2" and v.grade.size and v.grade.max() >= EXP_GRADE_LIMIT:
        raise OverflowError(f"exp-log2 gain 2^grade - 1 of grade {v.grade.max():g} passes float's range")
    return v.grade if dcg == "log2" else np.exp2(v.grade) - 1.0


def dcg(v: View, dcg: str, b: int | None) -> Score:
    """DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1); gain g (dcg='log2') or 2^g - 1 ('exp-log2').

    With ``b``, Järvelin & Kekäläinen's original discount: none up to rank b, 1/log_b(i) after.
    User: reads all k documents, attention fading with rank. Reference: Järvelin & Kekäläinen
    (2002); Moffat (2013).

    >>> from rpdi.metrics import score
    >>> round(score("DCG(b=2)@3", [3, 2, 3]), 2)
    6.89
    """
    return Score((_gains(v, dcg) * discount(np.arange(1, v.k + 1), b)).sum(axis=-1))


register(
    MeasureSpec("DCG", dcg, (_DCG, Param("b", int, None, "Järvelin-Kekäläinen log base "
                                            "(no discount up to rank b)", lambda x: x >= 2, ">= 2",
                                            optional=True)), "optional",
                "reads every document, attention fading as 1/log(rank)",
                "Järvelin & Kekäläinen 2002; Moffat 2013"),
)


def ndcg(v: View, dcg: str, level_gains: str) -> Score:
    """nDCG@k = DCG@k / DCG@k of the ideal ranking of all judged documents; undefined if 0.

    Without a cutoff the ranking is read to its end and the ideal ranking to R (trec_eval
    ``ndcg``). ``level_gains`` gives trec_eval's ``level=gain`` pairs (``ndcg.1=3,2=9``) for
    dcg='log2' (closed form only: nDCG's browsing model reads grades as gains).
    Reference: Järvelin & Kekäläinen (2002); trec_eval ``ndcg``, ``ndcg_cut_k``.

    >>> from rpdi.metrics import score
    >>> round(score("nDCG(dcg='exp-log2')@2", [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]), 2)
    0.78
    """
    pairs = parse_gains(level_gains)
    if pairs:
        gains, ideal = judged_gains(v, pairs), ideal_gains(v, pairs)
    elif dcg == "log2":
        gains, ideal = v.grade, v.ideal
    else:  # per topic, gains over 2^(top grade - EXP_TOP) so that grades of 1024 and more stay finite
        shift = np.maximum(v.ideal[:, :1] - EXP_TOP, 0.0)
        gains, ideal = scaled_exp_gains(v.grade, shift[None]), scaled_exp_gains(v.ideal, shift)
    actual = (gains * log2_discount(v.k)).sum(axis=-1)
    width = ideal.shape[1] if v.cutoff is None else min(v.k, ideal.shape[1])
    ideal_dcg = (np.maximum(ideal[:, :width], 0.0) * log2_discount(width)).sum(axis=-1)
    return Score(div(actual, ideal_dcg))


register(
    MeasureSpec("nDCG", ndcg, (_DCG, LEVEL_GAINS, JUDGED_ONLY), "optional",
                "DCG's user, scored against the best ranking of this topic",
                "Järvelin & Kekäläinen 2002; trec_eval ndcg_cut"),
)


def sdcg(v: View, dcg: str, min_rel: float, max_rel: float | None) -> Score:
    """SDCG@k = DCG@k / sum_{i<=k} 1/log2(i + 1), gains (grade - min_rel)/(max_rel - min_rel) in [0, 1]
    (``dcg='log2'``, the only formulation, as in ir_measures).

    User: continues from rank i to i + 1 with probability log2(i+1)/log2(i+2), up to rank k.
    Reference: Moffat (2013) Section 2.

    >>> from rpdi.metrics import score
    >>> round(score("SDCG@5", [1, 1, 0, 0, 0]), 2)
    0.55
    """
    w = log2_discount(v.k)
    return Score((v.scaled(max_rel, min_rel) * w).sum(axis=-1) / w.sum())


register(
    MeasureSpec("SDCG", sdcg, (Param("dcg", str, "log2", "DCG formulation: 'log2' only", lambda x: x == "log2",
                                     "'log2'"), MIN_REL, MAX_REL), "required",
                "continues from rank i with probability log2(i+1)/log2(i+2), up to rank k",
                "Moffat 2013"),
)


def cg(v: View) -> Score:
    """CG@k = sum_{i<=k} g_i.

    >>> from rpdi.metrics import score
    >>> score("CG@3", [3, 2, 3, 0])
    8.0
    """
    return Score(v.grade.sum(axis=-1))


register(
    MeasureSpec("CG", cg, (), "required", "reads k documents, adding up their grades",
                "Järvelin & Kekäläinen 2002"),
)


def sn_dcg(v: View, dcg: str) -> Score:
    """SN-DCG@k = DCG@k / DCG@k of the top k sorted by decreasing gain; undefined if 0.

    Reference: Moffat (2013) Section 3 (self-normalised DCG).

    >>> from rpdi.metrics import score
    >>> round(score("SN-DCG@5", [1, 0, 1, 0, 0]), 2)
    0.92
    """
    gains = _gains(v, dcg)
    w = log2_discount(v.k)
    best_order = -np.sort(-gains, axis=-1)
    return Score(div((gains * w).sum(axis=-1), (best_order * w).sum(axis=-1)))


register(
    MeasureSpec("SN-DCG", sn_dcg, (_DCG,), "required",
                "DCG's user, scored against the best reordering of the top k", "Moffat 2013"),
)
