"""usermodels/per_turn.py: a session user turn by turn; and the exact evaluator's ``spent``,
the per-rank time it reads reading from."""

from __future__ import annotations

import numpy as np
import pytest

from rpdi.metrics.evaluate import rankings_from_grades
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.sessions import session_rankings, sessions_from_ids
from rpdi.usermodels import exact, model_for
from rpdi.usermodels.per_turn import per_turn
from rpdi.usermodels.sdcg import SessionDCG


def test_spent_is_the_cost_rank_by_rank_and_the_reach_of_a_one_unit_reader():
    rbp = exact(model_for("RBP(p=0.7)"), rankings_from_grades("$-$?-"))
    assert rbp.spent.sum(-1) == pytest.approx(rbp.values["cost"])
    assert rbp.spent[0, 0] == pytest.approx(rbp.reach[0, 0])


def _session(grades, turns):
    Q, D = grades.shape
    r = Rankings.of_grades(grades[None], -np.sort(-grades, axis=1), [D] * Q, float(grades.max()),
                           topics=np.array([f"s_{q}" for q in turns], dtype=object))
    return session_rankings(r, sessions_from_ids(r.topics))


def test_a_session_user_reads_what_it_does_not_pass_over():
    """sDCG's user who moves on passes over the rest of its turn: those ranks are alive (reach)
    but not read; V(q, i) is the rank and query discounts' product, the value sum V g."""
    session = _session(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]]), [1, 2])
    model = SessionDCG(b=2.0, bq=2.0)
    view = per_turn(model, session)
    ex = exact(model, session)
    passing = (1 - 1 / np.log2(3)) * 0.5  # at rank 2 of turn 1: not reading on, moving on
    assert ex.reach[0, 0, 2] == pytest.approx(1 / np.log2(3) + passing, rel=1e-12)  # the passers are there too
    expected = np.array([[1.0], [0.5]]) * np.array([1.0, 1.0, 1 / np.log2(3)])
    assert view.read == pytest.approx(expected, rel=1e-12)
    assert view.value == pytest.approx((expected * np.array([[1, 0, 2], [0, 3, 1]])).sum(), rel=1e-12)
    assert view.weighted == pytest.approx(view.value, rel=1e-12)
    assert view.documents == pytest.approx(expected.sum(), rel=1e-12)
    assert (view.down + view.next + view.stop == pytest.approx(np.ones((2, 3))))
