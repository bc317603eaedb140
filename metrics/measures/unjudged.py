"""The share of unjudged documents in the top k (trec_eval's ``unj``). No browsing model."""

from __future__ import annotations

from rpdi.metrics.measures.registry import MeasureSpec, register
from rpdi.metrics.view import Score, View


def unjudged(v: View) -> Score:
    """Unj@k = documents in the top k with no judgment (outside the qrels or grade -1) / k;
    ranks past the ranking count as judged.

    Reference: trec_eval ``unj_k`` (1 - ir_measures' Judged@k).

    >>> from rpdi.metrics import score
    >>> score("Unj@4", "$??-")
    0.5
    """
    return Score((v.retrieved & ~v.judged).sum(axis=-1) / v.k)


register(
    MeasureSpec("Unj", unjudged, (), "required",
                "no browsing model: the share of unjudged documents in the top k", "trec_eval unj",
                model=False),
)
