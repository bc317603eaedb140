"""Satisfaction at k: any relevant document (Success), the best grade met (HIT), a document of
the topic's highest grade (Best).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.measures.registry import JUDGED_ONLY, MAX_REL, REL, MeasureSpec, register
from rpdi.metrics.view import Score, View


def success(v: View, rel: float) -> Score:
    """Success@k = 1 if a relevant document is in the top k, else 0.

    >>> from rpdi.metrics import score
    >>> score("Success@2", [0, 1, 0])
    1.0
    """
    return Score(v.relevant(rel).max(axis=-1, initial=0.0))


register(
    MeasureSpec("Success", success, (REL, JUDGED_ONLY), "required",
                "satisfied by any relevant document in the top k", "trec_eval success_k"),
)


def hit(v: View, max_rel: float | None) -> Score:
    """HIT@k = max_{i<=k} r_i, graded r_i = grade / max_rel.

    User: fully satisfied by any one good answer in the top k.
    Reference: Moffat (2013).

    >>> from rpdi.metrics import score
    >>> score("HIT(max_rel=4)@3", [0, 2, 1])
    0.5
    """
    return Score(v.scaled(max_rel).max(axis=-1, initial=0.0))


register(
    MeasureSpec("HIT", hit, (MAX_REL,), "required",
                "satisfied by the best document in the top k (graded)", "Moffat 2013"),
)


def best(v: View) -> Score:
    """Best@k = 1 if a document of the topic's highest grade is in the top k; undefined if no
    judged document has a positive grade.

    Reference: the seeds' product reference page.

    >>> from rpdi.metrics import score
    >>> score("Best@2", [1, 2, 0], judged_grades=[2, 1, 0])
    1.0
    """
    top = v.ideal[:, 0]
    found = ((v.grade == top[:, None]) & v.judged).any(axis=-1).astype(float)
    return Score(np.where(top > 0, found, np.nan))


register(
    MeasureSpec("Best", best, (), "required",
                "satisfied only by a document of the topic's highest grade", "product reference"),
)
