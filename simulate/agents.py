"""The agent engine: every user is a simpy process; reading a document takes simulated time.

The same model definitions as the vectorised engine, run one user at a time: a user reads rank
i (a timeout of the document's cost, one unit by default), draws one uniform number and follows
the branch it selects. Slow, but faithful to time, and the reference for the lockstep engine.
"""

from __future__ import annotations

import numpy as np
import simpy

from simulate.ranking import Ranking, choose
from usermodels.base import BrowsingModel


def sessions(model: BrowsingModel, ranking: Ranking, users: int, rng: np.random.Generator,
             cost=lambda rank: 1.0):
    """Simulate ``users`` sessions as simpy processes: arrays G, N (inf if never stopping) and
    the simulated time each session took (the sum of the costs of the documents read)."""
    env = simpy.Environment()
    cum = np.cumsum(ranking.start)
    starts = np.minimum(np.searchsorted(cum, rng.random(users) * cum[-1], side="right"), len(cum) - 1)
    G = np.zeros(users)
    N = np.zeros(users)
    time = np.zeros(users)

    def user(u: int, state: np.ndarray):
        if ranking.convention == "stop" and ranking.length == 0:
            return
        began = env.now
        i = 0
        while True:
            i += 1
            at = ranking.at(i)
            if i > ranking.length and bool(np.asarray(model.absorbed(state, i)).all()):
                N[u] = np.inf
                return
            yield env.timeout(cost(i))
            gain, cont, state = choose(model.step(state, at), rng.random(1), state)
            G[u] += gain[0]
            N[u] = i
            time[u] = env.now - began
            if not cont[0] or ranking.ends_at(i):
                return

    for u in range(users):
        env.process(user(u, starts[u: u + 1]))
    env.run()
    return G, N, time
