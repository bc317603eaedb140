"""The vectorised lockstep engine: all users of a ranking advance rank by rank as numpy arrays.

Each user draws its start state, then one uniform number per decision; users who stop drop out.
It samples the model's decisions, never the stopping distribution the exact evaluator derives,
so agreement between the two is evidence.
"""

from __future__ import annotations

import numpy as np

from simulate.ranking import Ranking, choose
from usermodels.base import BrowsingModel


def sessions(model: BrowsingModel, ranking: Ranking, users: int, rng: np.random.Generator):
    """Simulate ``users`` sessions: arrays G (gain), N (documents read, inf if never stopping)
    and the time spent (the branches' times). A model with a time budget is honoured by its
    memoryless rule: a continuing user survives a document of time t with probability
    exp(-t ln 2 / halflife), one more uniform draw."""
    cum = np.cumsum(ranking.start)
    state = np.minimum(np.searchsorted(cum, rng.random(users) * cum[-1], side="right"), len(cum) - 1)
    G = np.zeros(users)
    N = np.zeros(users)
    spent = np.zeros(users)
    alive = np.arange(users)
    if ranking.convention == "stop" and ranking.length == 0:
        alive = alive[:0]
    i = 0
    while alive.size:
        i += 1
        at = ranking.at(i)
        if i > ranking.length:  # a zero-gain tail: some users may never stop
            gone = np.broadcast_to(np.asarray(model.absorbed(state[alive], i), dtype=bool), alive.shape)
            if gone.any():
                N[alive[gone]] = np.inf
                alive = alive[~gone]
                if not alive.size:
                    break
        gain, cont, nxt, time = choose(model.step(state[alive], at), rng.random(alive.size), state[alive])
        G[alive] += gain
        N[alive] = i
        spent[alive] += time
        state[alive] = nxt
        if model.halflife is not None:
            cont &= rng.random(alive.size) < model.survival(time)
        alive = alive[cont & (not ranking.ends_at(i))]
    return G, N, np.where(np.isfinite(N), spent, np.inf)
