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


def sessions(model: BrowsingModel, ranking: Ranking, users: int, rng: np.random.Generator):
    """Simulate ``users`` sessions as simpy processes: arrays G, N (inf if never stopping) and
    the simulated time each session took. A model with a time budget has each user draw
    B ~ Exponential(ln 2 / halflife) at the start and stop once simulated time passes it."""
    env = simpy.Environment()
    cum = np.cumsum(ranking.start)
    starts = np.minimum(np.searchsorted(cum, rng.random(users) * cum[-1], side="right"), len(cum) - 1)
    budgets = np.full(users, np.inf)
    if model.halflife is not None:
        budgets = rng.exponential(model.halflife / np.log(2), users)
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
            gain, cont, state, spent = choose(model.step(state, at), rng.random(1), state)
            G[u] += gain[0]
            N[u] = i
            yield env.timeout(spent[0])
            time[u] = env.now - began
            if not cont[0] or ranking.ends_at(i) or env.now - began > budgets[u]:
                return

    for u in range(users):
        env.process(user(u, starts[u: u + 1]))
    env.run()
    return G, N, time
