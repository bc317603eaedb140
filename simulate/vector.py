"""The vectorised lockstep engine: all users of a ranking advance rank by rank as numpy arrays.

Each user draws its start state, then one uniform number per decision; users who stop drop out.
It samples the model's decisions, never the stopping distribution the exact evaluator derives,
so agreement between the two is evidence.
"""

from __future__ import annotations

import numpy as np

from rpdi.simulate.ranking import Ranking, choose
from rpdi.usermodels.base import BrowsingModel


def sessions(model: BrowsingModel, ranking: Ranking, users: int, rng: np.random.Generator):
    """Simulate ``users`` sessions: arrays G (gain), N (documents read, inf if never stopping)
    and the time spent (the branches' times). A model with a time budget is honoured by its
    memoryless rule: a continuing user survives a document of time t with probability
    exp(-t ln 2 / halflife), one more uniform draw."""
    state = ranking.draw_start(model, rng, users)
    # while every user is in the one start state (no branch has moved anyone yet), the model
    # sees a shared read-only array of it instead of a gather of the state array
    one = len(ranking.start) == 1 and type(model).draw_start is BrowsingModel.draw_start
    zeros = np.full(users, state[0]) if one and users else None
    G = np.zeros(users)
    N = np.zeros(users)
    spent = np.zeros(users)
    # while every branch time is a plain number, a user's time is the running sum of those
    # numbers up to its depth (the same additions, in the same order, as per user)
    clock = [0.0]
    alive = np.arange(users)
    if ranking.convention == "stop" and ranking.length == 0:
        alive = alive[:0]
    i = 0
    while alive.size:
        i += 1
        at = ranking.at(i)
        st = state[alive] if zeros is None else zeros[:alive.size]
        if i > ranking.length:  # a zero-gain tail: some users may never stop
            gone = np.broadcast_to(np.asarray(model.absorbed(st, i), dtype=bool), alive.shape)
            if gone.any():
                N[alive[gone]] = np.inf
                alive = alive[~gone]
                if not alive.size:
                    break
                st = state[alive] if zeros is None else zeros[:alive.size]
        gain, cont, nxt, time = choose(model.step(st, at), rng.random(alive.size), st)
        if type(gain) is not float or gain != 0.0:
            G[alive] += gain
        N[alive] = i
        if clock is not None and type(time) is float:
            clock.append(clock[-1] + time)
        else:
            if clock is not None:  # from here on per user: each one's time so far
                spent = np.asarray(clock)[np.where(np.isfinite(N), N - (N == i), 0).astype(np.intp)]
                clock = None
            spent[alive] += time
        if nxt is not st:
            zeros = None
            state[alive] = nxt
        if model.halflife is not None:
            cont &= rng.random(alive.size) < model.survival(time)
        alive = alive[cont] if not ranking.ends_at(i) else alive[:0]
    if clock is not None:
        spent = np.asarray(clock)[np.where(np.isfinite(N), N, 0).astype(np.intp)]
    return G, N, np.where(np.isfinite(N), spent, np.inf)
