"""esDCG and esnDCG: the users of Kanoulas, Carterette, Clough & Sanderson's (2011) expected
session measures with the path's DCG, whose state carries the position in the path."""

import numpy as np

from rpdi.metrics.measures.session import path_factors
from rpdi.usermodels.base import Branch
from rpdi.usermodels.escg import ExpectedSessionCG


class ExpectedSessionDCG(ExpectedSessionCG):
    """esCG's path (:class:`usermodels.escg.ExpectedSessionCG`: down a turn with p_down, else the
    turn ends and the user moves to the next query with p_reform), each document it reads
    counting its grade times d(j) = 1/max(1, log_b j), j its position in the path: the documents
    the user read before it, plus one. A document read again counts again, so the user needs no
    memory of what it read; its state carries its session (whose number of turns says where it
    must stop), the documents it has read, n, and whether it is moving on (then it passes the
    rest of its turn with no gain and no time; see :mod:`usermodels.session`). A session of Q_s
    turns and width k has the states 2 n + moving, n = 0..Q_s k, after those of the sessions
    before it. Its total gain is the path's DCG; its expectation, esDCG. Its worth per document
    comes from the closed form's :func:`~metrics.measures.session.path_factors` (esnDCG's
    E[1/IDCG(L) | where it is read]), so exact = closed does not check that; the
    path-enumeration tests (tests/metrics/test_sessions_paths.py) do.
    Reference: Kanoulas, Carterette, Clough & Sanderson (SIGIR 2011).
    """

    measure_name = "esDCG"
    normalise = False  # esnDCG: each document's worth times E[1/IDCG(L) | where it is read]

    def gains(self, grade, view):
        return np.maximum(grade, 0.0)

    def bind(self, view) -> None:
        """The states of the sessions of ``view`` (their session ``owner``, documents read ``n``)
        and the worth ``table`` (session, turn, rank, n) of a document, from
        :func:`metrics.measures.session.path_factors`; once per rankings."""
        r = view.rankings
        turns = self.layout(view)
        if getattr(self, "bound", None) is r:
            return
        size = 2 * (turns * self.width + 1)
        self.start = np.concatenate([[0], np.cumsum(size)[:-1]])
        self.owner = np.repeat(np.arange(len(turns)), size)
        self.n = (np.arange(size.sum()) - self.start[self.owner]) // 2
        self.turns = turns
        self.table = path_factors(turns, r.ideal, int(turns.max()), self.width, self.p_reform, self.p_down, self.b,
                                  self.normalise)
        self.bound = r

    def n_states(self, view) -> int:
        self.bind(view)
        return len(self.owner)

    def initial(self, view) -> np.ndarray:
        """Every user starts reading, nothing read yet, in its session's first state; a session
        whose worth is undefined (esnDCG's ideal gains nothing) has no users."""
        self.bind(view)
        p = np.zeros(view.length.shape + (len(self.owner),))
        defined = np.isfinite(self.table[:, 0, 0, 0])
        p[:, np.arange(len(self.turns)), self.start] = defined
        return p

    def step(self, state, at):
        turn, rank = self.position(at.rank)
        session, n = self.owner[state], self.n[state]
        last = self.turns[session] * self.width  # the most documents a user of the session reads
        reading = (state % 2 == 0) | (rank == 1)
        down, nxt = self.moves(turn, rank, at)
        nxt = np.where(turn < self.turns[session], nxt, 0.0)
        stop = np.maximum(1.0 - down - nxt, 0.0)
        worth = self.table[session, turn - 1, rank - 1, np.minimum(n, last - 1)]
        gain = np.where(reading, at.gain * np.nan_to_num(worth), 0.0)
        on = np.where(reading, 1.0, 0.0)
        read = self.start[session] + 2 * np.minimum(n + 1, last)  # one more document read
        return [Branch(np.where(reading, down, 1.0), gain, True, np.where(reading, read, state), on),
                Branch(on * nxt, gain, True, read + 1),
                Branch(on * stop, gain, False)]


class ExpectedSessionNDCG(ExpectedSessionDCG):
    """esDCG's user; its document read at path position j (rank i of turn q) counts
    g d(j) E[1/IDCG(L) | read at j], L the length its path will have and IDCG(L) the session's
    ideal DCG at L (:func:`metrics.measures.session.path_factors`: what it reads after is
    independent of how it got there). The expected total is E[DCG(path)/IDCG(L)], esnDCG,
    exactly; the user's own total is not its path's ratio but that ratio's expectation given
    each step of the path (so its spread is smaller; the engines average users, not ratios).
    Reference: Kanoulas, Carterette, Clough & Sanderson (SIGIR 2011).
    """

    measure_name = "esnDCG"
    normalise = True
