"""trec_eval's counts: topics, retrieved, relevant, relevant retrieved and judged non-relevant
retrieved documents (summed over topics, not averaged). No browsing model.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.registry import REL, MeasureSpec, Param, register
from rpdi.metrics.view import Score, View


def num_q(v: View) -> Score:
    """NumQ = 1 for every evaluated topic (trec_eval ``num_q``: summed, the number of topics).

    >>> from rpdi.metrics import score
    >>> score("NumQ", "-")
    1.0
    """
    return Score(np.ones(v.length.shape))


register(
    MeasureSpec("NumQ", num_q, (), "none", "no browsing model: counts the evaluated topics",
                "trec_eval num_q", average="sum", model=False),
)


def num_ret(v: View, rel: float | None) -> Score:
    """NumRet = the number of documents retrieved (trec_eval ``num_ret``; summed over topics);
    with ``rel``, those of grade >= rel (ir_measures' ``NumRet(rel=1)``, NumRelRet).

    >>> from rpdi.metrics import score
    >>> score("NumRet", "$-?$"), score("NumRet(rel=1)", "$-?$")
    (4.0, 2.0)
    """
    if rel is not None:
        return num_rel_ret(v, rel)
    return Score(v.length.astype(float))


register(
    MeasureSpec("NumRet", num_ret, (Param("rel", float, None, "count only the documents of grade >= rel",
                                          lambda x: x > 0, "> 0", optional=True),), "none",
                "no browsing model: counts retrieved documents", "trec_eval num_ret", average="sum", model=False),
)


def num_rel(v: View, rel: float) -> Score:
    """NumRel = R, the documents judged relevant (trec_eval ``num_rel``; summed over topics).

    >>> from rpdi.metrics import score
    >>> score("NumRel", "$-$", R=5)
    5.0
    """
    return Score(np.broadcast_to(v.R(rel), v.length.shape).astype(float))


register(
    MeasureSpec("NumRel", num_rel, (REL,), "none", "no browsing model: counts relevant documents",
                "trec_eval num_rel", average="sum", model=False),
)


def num_rel_ret(v: View, rel: float) -> Score:
    """NumRelRet = the relevant documents retrieved (trec_eval ``num_rel_ret``).

    >>> from rpdi.metrics import score
    >>> score("NumRelRet", "$-?$")
    2.0
    """
    return Score(v.relevant(rel).sum(axis=-1))


register(
    MeasureSpec("NumRelRet", num_rel_ret, (REL,), "none",
                "no browsing model: counts relevant retrieved documents", "trec_eval num_rel_ret",
                average="sum", model=False),
)


def num_nonrel_judged_ret(v: View, rel: float) -> Score:
    """NumNonRelJudgedRet = the judged non-relevant documents retrieved
    (trec_eval ``num_nonrel_judged_ret``).

    >>> from rpdi.metrics import score
    >>> score("NumNonRelJudgedRet", "$-?-")
    2.0
    """
    return Score(((v.grade < rel) & v.judged).sum(axis=-1).astype(float))


register(
    MeasureSpec("NumNonRelJudgedRet", num_nonrel_judged_ret, (REL,), "none",
                "no browsing model: counts judged non-relevant retrieved documents",
                "trec_eval num_nonrel_judged_ret", average="sum", model=False),
)
