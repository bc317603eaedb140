"""A session user turn by turn, by probability propagation: what ``rpdi explain`` shows of a
session measure's user (:mod:`usermodels.per_rank` is the same for one ranking).

On one session's turns laid end to end (:class:`metrics.sessions.SessionRankings`), from the
exact evaluator (:func:`usermodels.exact.exact`): V(q, i), the chance the user reads rank i of
turn q (the time it spends there: a session user reads a document in one unit of time and passes
over the rest of a turn it leaves in none, :mod:`usermodels.session`), and L(q, i), the chance it
stops there. A user who reads rank i of turn q then goes down to rank i + 1 with probability
D(q, i) = V(q, i + 1)/V(q, i), stops with S(q, i) = L(q, i)/V(q, i), or moves to the next
query's first document with M(q, i) = 1 - D(q, i) - S(q, i). R(q) = V(q, 1), the chance of
reaching turn q at all, is the query-position discount; V(q, i)/R(q) the rank discount within
the turn. For a ``total`` user who accrues each document's gain as read, the value is
sum_{q,i} V(q, i) g(q, i).

Example: sRBP(p=0.8,b=0.6) reaches turn q with x^(q-1), x = p(1 - b)/(1 - b p) = 0.6154.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpdi.metrics.sessions import SessionRankings
from rpdi.metrics.view import View
from rpdi.usermodels.base import BrowsingModel
from rpdi.usermodels.exact import exact


@dataclass(frozen=True)
class PerTurn:
    """Per turn q and rank i (arrays (Q, width)): ``gain`` (the model's gain there), ``read``
    V(q, i), and for a user who read it ``down`` D, ``next`` M and ``stop`` S (NaN where nobody
    reads); ``reached`` (Q,) R(q); ``value`` and ``upper`` the exact expectation and the upper end
    of its interval (unjudged documents, short rankings and unjudged turns at their best);
    ``documents`` the expected documents read, ``turns`` the expected turns reached;
    ``weighted`` sum V(q, i) g(q, i), the value when the user accrues each document's gain as read
    (NaN for a normalised user)."""

    gain: np.ndarray
    read: np.ndarray
    down: np.ndarray
    next: np.ndarray
    stop: np.ndarray
    reached: np.ndarray
    value: float
    upper: float
    documents: float
    turns: float
    weighted: float


def per_turn(model: BrowsingModel, session: SessionRankings, convention: str = "unknown") -> PerTurn:
    """The turn-by-turn view of a session user on the one session of ``session`` (one run).

    >>> from rpdi.metrics.rankings import Rankings
    >>> from rpdi.metrics.sessions import session_rankings, sessions_from_ids
    >>> from rpdi.usermodels.srbp import SessionRBP
    >>> r = Rankings.of_grades(np.ones((1, 2, 2)), np.ones((2, 2)), [2, 2], 1.0,
    ...                        topics=np.array(["s_1", "s_2"], dtype=object))
    >>> v = per_turn(SessionRBP(p=0.5, b=0.5), session_rankings(r, sessions_from_ids(r.topics)))
    >>> v.reached.round(4).tolist(), v.down[0].tolist(), v.next[0].round(4).tolist()
    ([1.0, 0.3333], [0.25, 0.0], [0.25, 0.3333])
    """
    ex = exact(model, session, convention)
    Q, width = session.turn_topics.shape[1], session.width
    n = Q * width
    fit = lambda a: np.pad(a[:n], (0, max(n - a.size, 0))).reshape(Q, width)  # noqa: E731
    read, stopped = fit(ex.spent[0, 0]), fit(ex.stop[0, 0])
    view = View(session, model.k)
    gain = fit(np.asarray(model.gains(view.grade, view)[0, 0], dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        on = np.where(read > 0, read, np.nan)
        down = np.concatenate([read[:, 1:], np.zeros((Q, 1))], axis=1) / on
        stop = stopped / on
        nxt = np.clip(1.0 - down - stop, 0.0, 1.0)
    aggregation = model.aggregation
    return PerTurn(gain, read, down, nxt, stop, read[:, 0].copy(), float(ex.value[0, 0]),
                   float(ex.upper[aggregation][0, 0]), float(ex.values["cost"][0, 0]), float(read[:, 0].sum()),
                   float((read * gain).sum()) if not model.normalised else float("nan"))
