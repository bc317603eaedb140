"""What a session user is: a browsing model that reads a session's turns one after another.

The engines read one ranking rank by rank; a session is given to them as one ranking, its turns'
rankings laid end to end, ``width`` ranks each (:class:`metrics.sessions.SessionRankings`). The
user's state carries its session's number of turns and whether it is reading or moving on: at
each document it reads it may go down (the next rank of the turn), move to the next query (its
first document), or stop. A user who moves on passes over the rest of its turn with probability
1, no gain and no time (a deterministic step, so no engine needs to learn a jump), and reads
again at the next turn's first rank. So its time (the ``cost``) counts the documents it read;
its depth N is its place in the laid-out session, the documents passed over included. Past the
last turn's last rank nobody reads on.

A subclass says, for a user reading rank i of turn q (``moves``, which also sees what the user
meets there, an :class:`usermodels.base.At`), the probabilities of going down and of moving to
the next query (the rest stops); the last rank's going down and the last
turn's moving on are refused by this class (the user stops instead).
"""

from __future__ import annotations

import numpy as np

from dataclasses import replace

from rpdi.metrics.errors import InputError
from rpdi.usermodels.base import Branch, BrowsingModel
from rpdi.usermodels.exact import exact


class SessionUser(BrowsingModel):
    """Base class of session users (see the module's docstring): subclasses define
    ``moves(turn, rank, at)`` -> (down, next) for a reading user, turn and rank from 1."""

    horizon = 1 << 40  # every user stops by its session's last rank
    width: int | None = None  # ranks per turn, from the session rankings the model meets

    @classmethod
    def declaration(cls):
        """As :meth:`BrowsingModel.declaration`; a session user of one's own declares a session
        measure whose cutoff is the ranks read per turn."""
        spec = super().declaration()
        return spec if spec.session else replace(spec, session=True, passes_cutoff=True)

    def layout(self, view) -> np.ndarray:
        """The (Σ,) turns of the sessions of ``view``; binds ``width`` to its rankings'."""
        from rpdi.metrics.sessions import SessionRankings

        r = view.rankings
        if not isinstance(r, SessionRankings):
            raise InputError(f"measure {self.measure.text!r}: a session user; give the sessions (a session "
                             f"file, or CAsT's SESSION_TURN topic ids)")
        if self.measure.cutoff is not None and self.measure.cutoff != r.width:
            raise InputError(f"measure {self.measure.text!r}: the session rankings were laid out {r.width} "
                             f"ranks per turn")
        self.width = r.width
        return r.turns

    def n_states(self, view) -> int:
        return 2 * (int(self.layout(view).max()) + 1)

    def initial(self, view) -> np.ndarray:
        """Every user of a session of n turns starts reading (state 2 n)."""
        turns = self.layout(view)
        p = np.zeros(view.length.shape + (self.n_states(view),))
        p[:, np.arange(len(turns)), 2 * turns] = 1.0
        return p

    def moves(self, turn: int, rank: int, at) -> tuple:
        raise NotImplementedError

    def position(self, rank: int) -> tuple[int, int]:
        """(turn, rank within the turn), from 1, of a rank of the laid-out session."""
        return (rank - 1) // self.width + 1, (rank - 1) % self.width + 1

    def step(self, state, at):
        turn, rank = self.position(at.rank)
        turns, reading = state // 2, (state % 2 == 0) | (rank == 1)
        down, nxt = self.moves(turn, rank, at)
        down = down if rank < self.width else 0.0
        nxt = np.where(turn < turns, nxt, 0.0)
        stop = np.maximum(1.0 - down - nxt, 0.0)
        gain = np.where(reading, at.gain, 0.0)
        on = np.where(reading, 1.0, 0.0)
        return [Branch(np.where(reading, down, 1.0), gain, True, np.where(reading, 2 * turns, state), on),
                Branch(on * nxt, gain, True, 2 * turns + 1),
                Branch(on * stop, gain, False)]


def turns_reached(model: SessionUser, rankings, convention: str = "unknown") -> np.ndarray:
    """(S, Σ, Q) the probability that turn q is the last a user of ``model`` reads, per run and
    session of the :class:`metrics.sessions.SessionRankings` (0 past a session's last turn;
    NaN where the user is undefined), from the exact evaluator's stopping distribution: a user
    who stops at rank i of the laid-out session last read turn (i - 1) // width + 1.

    >>> import numpy as np
    >>> from rpdi.metrics.rankings import Rankings
    >>> from rpdi.metrics.sessions import session_rankings, sessions_from_ids
    >>> from rpdi.usermodels.srbp import SessionRBP
    >>> r = Rankings.of_grades(np.zeros((1, 2, 1)), np.zeros((2, 1)), [1, 1], 1.0,
    ...                        topics=np.array(["s_1", "s_2"], dtype=object))
    >>> turns_reached(SessionRBP(p=0.5, b=0.5), session_rankings(r, sessions_from_ids(r.topics))).round(4).tolist()
    [[[0.6667, 0.3333]]]
    """
    stop = exact(model, rankings, convention).stop
    width, Q = model.width, len(rankings.turn_topics[0])
    stop = np.pad(stop, [(0, 0), (0, 0), (0, max(Q * width - stop.shape[-1], 0))])[..., :Q * width]
    total = stop.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        return np.where(total > 0, stop.reshape(stop.shape[:2] + (Q, width)).sum(-1) / total, np.nan)


def mean_turns_reached(reached: np.ndarray, present: np.ndarray) -> np.ndarray:
    """(S, Q) each run's distribution of the turn reached over its sessions taking part
    (``reached`` from :func:`turns_reached`, ``present`` (S, Σ)): a session drawn uniformly,
    then a user."""
    ok = present & np.isfinite(reached).all(-1)
    return np.where(ok[..., None], reached, 0.0).sum(1) / np.maximum(ok.sum(1), 1)[:, None]
