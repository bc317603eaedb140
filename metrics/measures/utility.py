"""The linear utility of the retrieved set (trec_eval's ``utility``). No browsing model."""

from __future__ import annotations

import math

import numpy as np

from rpdi.metrics.measures.registry import REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


def _finite(x: float) -> bool:
    return math.isfinite(x)


def utility(v: View, rel: float, a: float, b: float, c: float, d: float, docs: float) -> Score:
    """Utility = a RelRet + b NonRelRet + c RelNotRet + d NonRelNotRet, NonRelNotRet counted
    against a collection of ``docs`` documents (trec_eval -N; only used when d != 0).

    User: the TREC filtering tracks' linear utility of the retrieved set.
    Reference: trec_eval ``utility``.

    >>> from rpdi.metrics import score
    >>> score("Utility(a=2.0)", "$--", R=3)
    0.0
    """
    rel_ret = v.relevant(rel).sum(axis=-1)
    ret = v.length.astype(float)
    R = np.broadcast_to(v.R(rel), rel_ret.shape)
    value = a * rel_ret + b * (ret - rel_ret) + c * (R - rel_ret)
    if d:
        value = value + d * (docs - ret - (R - rel_ret))
    return Score(value)


register(
    MeasureSpec("Utility", utility,
                (REL, Param("a", float, 1.0, "gain of a relevant retrieved document", _finite, "finite"),
                 Param("b", float, -1.0, "gain of a non-relevant retrieved document", _finite, "finite"),
                 Param("c", float, 0.0, "gain of a relevant document not retrieved", _finite, "finite"),
                 Param("d", float, 0.0, "gain of a non-relevant document not retrieved", _finite, "finite"),
                 Param("docs", float, 0.0, "documents in the collection (trec_eval -N)", lambda x: x >= 0, ">= 0")),
                "none", "no browsing model: a linear utility of the retrieved set", "trec_eval utility",
                model=False),
)
