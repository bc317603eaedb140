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
    # Fast path 1: while every user is still in the one start state (no branch has moved anyone
    # yet), the model is shown a slice of one shared read-only array of that state instead of a
    # fresh gather state[alive] at every rank; it ends when a branch returns new states.
    single_start = len(ranking.start) == 1 and type(model).draw_start is BrowsingModel.draw_start
    shared_start = np.full(users, state[0]) if single_start and users else None
    G = np.zeros(users)
    N = np.zeros(users)
    spent = np.zeros(users)
    # Fast path 2: while every branch time is a plain number, all users who reach depth d have
    # spent the same time, so one list elapsed_at_depth[d] (the same additions, in the same
    # order) replaces a per-user update; at the first per-user time it is expanded into ``spent``.
    elapsed_at_depth = [0.0]
    alive = np.arange(users)
    if ranking.convention == "stop" and ranking.length == 0:
        alive = alive[:0]

    def alive_states():
        return state[alive] if shared_start is None else shared_start[:alive.size]

    i = 0
    while alive.size:
        i += 1
        at = ranking.at(i)
        states = alive_states()
        if i > ranking.length:  # a zero-gain tail: some users may never stop
            absorbed = np.broadcast_to(np.asarray(model.absorbed(states, i), dtype=bool), alive.shape)
            if absorbed.any():
                N[alive[absorbed]] = np.inf
                alive = alive[~absorbed]
                if not alive.size:
                    break
                states = alive_states()
        gain, cont, nxt, time = choose(model.step(states, at), rng.random(alive.size), states)
        if type(gain) is not float or gain != 0.0:  # a scalar zero gain adds nothing
            G[alive] += gain
        N[alive] = i
        if elapsed_at_depth is not None and type(time) is float:
            elapsed_at_depth.append(elapsed_at_depth[-1] + time)
        else:
            if elapsed_at_depth is not None:  # from here on per user: each one's time so far
                depth_before = np.where(np.isfinite(N), N - (N == i), 0).astype(np.intp)
                spent = np.asarray(elapsed_at_depth)[depth_before]
                elapsed_at_depth = None
            spent[alive] += time
        if nxt is not states:  # choose returns the states it was given when no branch moves them
            shared_start = None
            state[alive] = nxt
        if model.halflife is not None:
            cont &= rng.random(alive.size) < model.survival(time)
        alive = alive[cont] if not ranking.ends_at(i) else alive[:0]
    if elapsed_at_depth is not None:
        spent = np.asarray(elapsed_at_depth)[np.where(np.isfinite(N), N, 0).astype(np.intp)]
    return G, N, np.where(np.isfinite(N), spent, np.inf)
