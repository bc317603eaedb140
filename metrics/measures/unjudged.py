"""The share of unjudged documents in the top k (trec_eval's ``unj``) and of judged ones
(ir_measures' ``Judged``). No browsing model."""

from __future__ import annotations

from rpdi.metrics.measures.kernels import div
from rpdi.metrics.measures.registry import MeasureSpec, register
from rpdi.metrics.view import Score, View


def unjudged(v: View) -> Score:
    """Unj@k = documents in the top k with no judgment (outside the qrels or grade -1) / k;
    ranks past the ranking count as judged.

    Reference: trec_eval ``unj_k``.

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


def judged(v: View) -> Score:
    """Judged@k = documents in the top min(k, n) that are in the qrels (any grade) / min(k, n);
    without a cutoff over the whole ranking; undefined for an empty ranking.

    Reference: ir_measures ``Judged`` (OpenNIR's judgment rate).

    >>> from rpdi.metrics import score
    >>> score("Judged@10", "$??-")
    0.5
    """
    return Score(div((v.retrieved & v.pooled).sum(axis=-1), v.length))


register(
    MeasureSpec("Judged", judged, (), "optional",
                "no browsing model: the share of the documents read that have a judgment",
                "ir_measures Judged", model=False),
)
