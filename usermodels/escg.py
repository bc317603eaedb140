"""esCG: the session user of Kanoulas, Carterette, Clough & Sanderson's (2011) model-based
session measures."""

import numpy as np

from rpdi.metrics.measures.session import unseen
from rpdi.usermodels.session import SessionUser


class ExpectedSessionCG(SessionUser):
    """Reads down a turn's ranking with probability p_down after each document, else stops the
    turn (at its last rank k, for sure); having stopped, moves to the next query with probability
    p_reform, else ends the session. Rank i of turn q is read with probability
    p_reform^(q-1) p_down^(i-1): from rank i < k the user goes down with p_down and moves on with
    (1 - p_down) p_reform; from rank k it moves on with p_reform.

    A document read before gains nothing. Which documents the user read before depends on its
    path, which its state does not carry; its gain at rank i of turn q is instead the grade times
    the probability that a user who reads there has not read the document before
    (:func:`metrics.measures.session.unseen`: its stopping ranks in earlier turns are independent
    of each other and of reaching turn q). The expected total gain is the same, esCG; a user's
    own total is not the path's (its spread is smaller). Its exact value reuses the closed form's
    :func:`~metrics.measures.session.unseen`, so exact = closed does not check that; the
    path-enumeration tests (tests/metrics/test_sessions_paths.py) do. Reference: Kanoulas,
    Carterette, Clough & Sanderson (SIGIR 2011).
    """

    measure_name = "esCG"
    aggregation = "total"

    def gains(self, grade, view):
        r = view.rankings
        if grade.shape != r.grade.shape:  # the residual's upper-end gain (largest grade, unknown rank): u = 1
            return np.maximum(grade, 0.0)
        return np.maximum(grade, 0.0) * unseen(r.grid(r.doc), self.p_down).reshape(grade.shape)

    def moves(self, turn, rank, at):
        if rank < self.width:
            return self.p_down, (1 - self.p_down) * self.p_reform
        return 0.0, self.p_reform
