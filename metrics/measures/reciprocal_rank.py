"""Reciprocal rank and the two variants of Moffat & Zobel (2008) Section 4.4: RR2, the sceptic
who stops at the second relevant document, and CautiousRR, who reads c documents further.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.kernels import first_rank
from rpdi.metrics.measures.registry import JUDGED_ONLY, REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


def reciprocal_rank(v: View, rel: float) -> Score:
    """RR@k = 1 / (rank of the first relevant document), 0 if none in the top k.

    User: reads down the list and stops at the first relevant document.
    Reference: trec_eval ``recip_rank``; Moffat (2013).

    >>> from rpdi.metrics import score
    >>> score("RR", [0, 0, 1, 1])
    0.3333333333333333
    """
    first = first_rank(v.relevant(rel))
    return Score(np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0))


register(
    MeasureSpec("RR", reciprocal_rank, (REL, JUDGED_ONLY), "optional",
                "stops at the first relevant document", "trec_eval recip_rank; Moffat 2013"),
)


def rr2(v: View, rel: float) -> Score:
    """RR2@k = 1 / (rank of the second relevant document), 0 if fewer than two in the top k.

    User: a sceptic who stops only once a second relevant document corroborates the first.
    Reference: Moffat & Zobel (2008) Section 4.4.

    >>> from rpdi.metrics import score
    >>> score("RR2", [0, 1, 0, 1])
    0.25
    """
    second = first_rank(v.relevant(rel), nth=2)
    return Score(np.where(second > 0, 1.0 / np.maximum(second, 1), 0.0))


register(
    MeasureSpec("RR2", rr2, (REL,), "optional",
                "a sceptic: stops at the second relevant document", "Moffat & Zobel 2008 s4.4"),
)


def cautious_rr(v: View, rel: float, c: int) -> Score:
    """CautiousRR(c)@k = 1 / (c + rank of the first relevant document), 0 if none in the top k.

    User: stops only after reading c more documents past the first relevant one.
    Reference: Moffat & Zobel (2008) Section 4.4 ("damping" factor).

    >>> from rpdi.metrics import score
    >>> score("CautiousRR(c=2)", [0, 1, 0])
    0.25
    """
    first = first_rank(v.relevant(rel))
    return Score(np.where(first > 0, 1.0 / (c + np.maximum(first, 1)), 0.0))


register(
    MeasureSpec("CautiousRR", cautious_rr,
                (REL, Param("c", int, 1, "documents read past the first relevant one",
                           lambda x: x >= 0, ">= 0")), "optional",
                "stops c documents after the first relevant one", "Moffat & Zobel 2008 s4.4"),
)
