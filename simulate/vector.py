"""The vectorised lockstep engine: all users advance rank by rank as numpy arrays.

Each user draws its start state, then one uniform number per decision; users who stop drop out.
It samples the model's decisions, never the stopping distribution the exact evaluator derives,
so agreement between the two is evidence.

Many rankings ("lanes": a ranking, its number of users and its own generator) are simulated in
one pass: the users of every lane are one array, grouped by lane, the lanes' gains one table, and
each step is a handful of numpy operations over all of them; while every user is in the same
state the model steps once per lane, not once per user. Every lane still draws from its own
generator, in the order it would alone: its start states first (the model's draw), then, rank by
rank, one uniform per user still reading, in user order (and one more per user for a time
budget); a deterministic step's unused uniforms are skipped by advancing the generator, as if
drawn. So a lane's sessions are the same, bit for bit, whether it is simulated alone
(:func:`sessions`) or with others (:func:`batch`).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from rpdi.simulate.ranking import Ranking, choose
from rpdi.usermodels.base import At, BrowsingModel

GROUP = 1 << 18  # users simulated together at most (lanes are whole): fewer steps' overhead, ~30 MiB of arrays


def sessions(model: BrowsingModel, ranking: Ranking, users: int, rng: np.random.Generator):
    """Simulate ``users`` sessions: arrays G (gain), N (documents read, inf if never stopping)
    and the time spent (the branches' times). A model with a time budget is honoured by its
    memoryless rule: a continuing user survives a document of time t with probability
    exp(-t ln 2 / halflife), one more uniform draw."""
    return next(batch(model, [(ranking, users, rng)]))


def batch(model: BrowsingModel, lanes):
    """:func:`sessions` of each lane ``(ranking, users, rng)``, in order, yielded as each group
    is done: the lanes are simulated together, in groups of at most GROUP users (so memory stays
    bounded, and each lane's results do not depend on its group)."""
    group, size = [], 0
    for lane in lanes:
        if group and size + lane[1] > GROUP:
            yield from _lockstep(model, group)
            group, size = [], 0
        group.append(lane)
        size += lane[1]
    if group:
        yield from _lockstep(model, group)


class _Streams:
    """Each lane's uniforms from its own generator, in the order it draws them alone."""

    def __init__(self, rngs: list):
        self.rngs = rngs

    def take(self, live: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The next counts[r] uniforms of every lane r in ``live``, lane after lane."""
        u = np.empty(int(counts.sum()))
        begin = 0
        for r, k in zip(live.tolist(), counts.tolist()):
            self.rngs[r].random(out=u[begin:begin + k])
            begin += k
        return u

    def skip(self, live: np.ndarray, counts: np.ndarray) -> None:
        """Pass over the next counts[r] uniforms of every lane r in ``live`` (a step that draws
        nothing still uses them up, as in :func:`sessions` alone): the generator advances as if
        they were drawn."""
        for r, k in zip(live.tolist(), counts.tolist()):
            bits = self.rngs[r].bit_generator
            if hasattr(bits, "advance"):  # PCG64 (every stream of rpdi), Philox, ...
                bits.advance(k)
            else:
                self.rngs[r].random(k)


class _LazyAt(At):
    """At whose fields are computed on first use (``fields[name]()``): a model reads only some."""

    def __init__(self, rank: int, fields: dict):
        self.rank, self._fields = rank, fields

    gain = cached_property(lambda self: self._fields["gain"]())
    seen = cached_property(lambda self: self._fields["seen"]())
    best = cached_property(lambda self: self._fields["best"]())
    words = cached_property(lambda self: self._fields["words"]())


def _tables(rankings: list[Ranking]) -> dict:
    """(lanes, W + 1) tables of what :meth:`Ranking.at` gives at ranks 1..W + 1 (W the longest
    view): rank i of lane r is column min(i, W + 1) - 1, the last column every lane's zero-gain
    tail (a lane's own tail starts past its view)."""
    W = max(len(r.gains) for r in rankings)
    table = {k: np.empty((len(rankings), W + 1)) for k in ("gain", "seen", "best", "words")}
    for lane, r in enumerate(rankings):
        w = len(r.gains)
        table["gain"][lane, :w], table["gain"][lane, w:] = r.gains, 0.0
        table["seen"][lane, :w], table["seen"][lane, w:] = r.seen, r.seen[-1] if w else 0.0
        table["best"][lane, :w], table["best"][lane, w:] = r.best, max(r.best[-1], r.gains[-1]) if w else 0.0
        table["words"][lane, :w], table["words"][lane, w:] = np.nan if r.words is None else r.words, np.nan
    return table


def _lockstep(model: BrowsingModel, lanes: list) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The lanes' sessions, every lane's users advancing together. The users are rows of arrays
    grouped by lane (lane order, then user order within a lane, as :func:`sessions` alone would
    keep them)."""
    rankings = [r for r, _, _ in lanes]
    sizes = np.array([n for _, n, _ in lanes], dtype=np.intp)
    users = int(sizes.sum())
    state = np.concatenate([r.draw_start(model, rng, n) for r, n, rng in lanes])
    streams = _Streams([rng for _, _, rng in lanes])
    table = _tables(rankings)
    W1 = table["gain"].shape[1]
    length = np.array([r.length for r in rankings])
    convention, horizon = rankings[0].convention, rankings[0].horizon
    shortest = int(length.min())
    G_out, N_out, spent_out = np.zeros(users), np.zeros(users), np.zeros(users)

    counts = sizes.copy()  # users of each lane still reading
    if convention == "stop":  # an empty ranking: its users read nothing
        counts[length == 0] = 0
    uid = np.arange(users) if (counts == sizes).all() else np.flatnonzero(np.repeat(counts > 0, sizes))
    # The reading users' rows: uid (which user), the state and the time spent, grouped by lane
    # (counts[r] rows of lane r); a user who stops leaves them. While every user is in one and the
    # same state and no branch has moved anyone, the model steps once per lane (its branches
    # repeated for the lane's rows), not once per user.
    constant = np.broadcast_to(state[:1], (users,)) if users and (state == state[0]).all() else None
    state = state[uid]
    # While every branch time is a plain number, all users who reach depth d have spent the same
    # time, elapsed[d] (the same additions, in the same order as per user); from the first per-user
    # time on (rank ``switched``), each user's time so far is carried in ``spent``.
    elapsed, spent, switched = [0.0], None, None

    def stopping(keep: np.ndarray, live: np.ndarray, n: np.ndarray, depth: float) -> None:
        """The users of the rows where ``keep`` is False stop at ``depth`` and leave the rows."""
        nonlocal uid, state, spent
        where = np.flatnonzero(~keep)
        if not where.size:
            return
        gone = uid[where]
        N_out[gone] = depth
        if spent is not None:
            spent_out[gone] = spent[where]
        if live.size == 1:
            counts[live] -= where.size
        else:
            counts[live] = np.add.reduceat(keep.view(np.uint8), np.cumsum(n) - n, dtype=np.intp)
        uid = uid[keep]
        if constant is None:
            state = state[keep]
        if spent is not None:
            spent = spent[keep]

    def lanes_now():
        """The lanes with rows, their rows and the states the model steps on (one per such lane
        while the state is constant, else one per row)."""
        live = np.flatnonzero(counts)
        return live, counts[live], state if constant is None else constant[:live.size]

    i = 0
    while counts.any():
        i += 1
        column = min(i, W1) - 1
        live, n, here = lanes_now()
        tail = length[live] < i if i > shortest else None
        if tail is not None and tail.any():  # users past their list's end, in a zero-gain tail: some may never stop
            gone = np.broadcast_to(np.asarray(model.absorbed(here, i), dtype=bool), here.shape)
            stopping(~(np.repeat(tail & gone, n) if constant is not None else np.repeat(tail, n) & gone), live, n,
                     np.inf)
            if not counts.any():
                break
            live, n, here = lanes_now()
        lane_fields = {k: (lambda k=k: table[k][live, column]) for k in table}
        if constant is None:
            per_lane, users_here = None, here
            at = _LazyAt(i, {k: (lambda f=f: np.repeat(f(), n)) for k, f in lane_fields.items()})
        else:
            per_lane, users_here = n, constant[:uid.size]
            at = _LazyAt(i, lane_fields)
        branches = model.step(here, at)
        if len(branches) == 1:  # a deterministic step: its uniforms are drawn (in sessions alone) but unused
            streams.skip(live, n)
            u = np.empty(uid.size)
        else:
            u = streams.take(live, n)
        gain, cont, nxt, time, pick = choose(branches, u, users_here, per_lane)
        if type(gain) is not float or gain != 0.0:  # a scalar zero gain adds nothing
            G_out[uid] += gain  # each user's gains summed in rank order, as alone
        if spent is None and type(time) is float:
            elapsed.append(elapsed[-1] + time)
        else:
            if spent is None:
                spent, switched = np.full(uid.size, elapsed[-1]), i
            spent += time
        if nxt is not users_here:  # choose returns the states it was given when no branch moves them
            state = np.array(nxt)
            constant = None
        if model.halflife is not None:
            cont &= streams.take(live, n) < pick([model.survival(b.time) for b in branches])
        if i >= horizon:
            cont[:] = False
        elif convention == "stop" and i >= shortest:
            ends = i >= length[live]
            if ends.any():
                cont &= ~np.repeat(ends, n)
        stopping(cont, live, n, i)
    finite = np.isfinite(N_out)
    early = finite if switched is None else finite & (N_out < switched)
    spent_out[early] = np.asarray(elapsed)[N_out[early].astype(np.intp)]
    spent_out[~finite] = np.inf
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return [(G_out[a:b], N_out[a:b], spent_out[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
