"""The agent engine: every user is a simpy process; reading a document takes simulated time.

The same model definitions as the vectorised engine, run one user at a time: a user reads rank
i (a timeout of the branch's time, one unit by default), draws one uniform number and follows
the branch it selects. Slow, but faithful to time, and the reference for the lockstep engine.

A model's step is a function of (state, rank) only (the exact evaluator relies on this too), so
each (rank, state) transition is worked out once per block, as plain Python numbers, and every
user who meets it draws against it.
"""

from __future__ import annotations

import numpy as np
import simpy

from rpdi.simulate.ranking import Ranking
from rpdi.usermodels.base import BrowsingModel


class _Transitions:
    """The model's branches at (rank, state) as plain numbers, computed on first use."""

    def __init__(self, model: BrowsingModel, ranking: Ranking):
        self.model, self.ranking = model, ranking
        self.steps: dict = {}
        self.gone: dict = {}

    def step(self, i: int, state: int) -> tuple:
        """(cumulative probabilities but the last, gains, continues, next states, times)."""
        key = (i, state)
        t = self.steps.get(key)
        if t is None:
            s = np.array([state])
            branches = self.model.step(s, self.ranking.at(i))
            one = lambda x, kind: kind(np.asarray(x).item())  # noqa: E731  (a scalar or one state's)
            cums, c = [], None
            for b in branches[:-1]:
                p = one(b.prob, float)
                c = p if c is None else c + p
                cums.append(c)
            end = self.ranking.ends_at(i)
            t = self.steps[key] = (
                tuple(cums),
                tuple(one(b.gain, float) for b in branches),
                tuple(one(b.cont, bool) and not end for b in branches),
                tuple(state if b.state is None else one(b.state, int) for b in branches),
                tuple(one(b.time, float) for b in branches))
        return t

    def absorbed(self, i: int, state: int) -> bool:
        key = (i, state)
        a = self.gone.get(key)
        if a is None:
            a = self.gone[key] = bool(np.asarray(self.model.absorbed(np.array([state]), i)).all())
        return a


def sessions(model: BrowsingModel, ranking: Ranking, users: int, rng: np.random.Generator):
    """Simulate ``users`` sessions as simpy processes: arrays G, N (inf if never stopping) and
    the simulated time each session took. A model with a time budget has each user draw
    B ~ Exponential(ln 2 / halflife) at the start and stop once simulated time passes it."""
    env = simpy.Environment()
    starts = ranking.draw_start(model, rng, users)
    budgets = np.full(users, np.inf)
    if model.halflife is not None:
        budgets = rng.exponential(model.halflife / np.log(2), users)
    G = np.zeros(users)
    N = np.zeros(users)
    time = np.zeros(users)
    table = _Transitions(model, ranking)
    draw, timeout, length = rng.random, env.timeout, ranking.length

    def user(u: int, state: int, budget: float):
        began = env.now
        g = 0.0
        i = 0
        while True:
            i += 1
            if i > length and table.absorbed(i, state):
                N[u] = np.inf
                return
            cums, gains, conts, states, times = table.step(i, state)
            x = draw()
            j = 0
            for c in cums:  # the first branch whose cumulative probability exceeds x
                j += x >= c
            g += gains[j]
            G[u] = g
            N[u] = i
            yield timeout(times[j])
            time[u] = env.now - began
            state = states[j]
            if not conts[j] or env.now - began > budget:
                return

    if not (ranking.convention == "stop" and ranking.length == 0):  # else nobody reads anything
        for u, (s, b) in enumerate(zip(starts.tolist(), budgets.tolist())):
            env.process(user(u, s, b))
    env.run()
    return G, N, time


def batch(model: BrowsingModel, lanes):
    """:func:`sessions` of each lane ``(ranking, users, rng)``, one after another (yielded)."""
    for ranking, users, rng in lanes:
        yield sessions(model, ranking, users, rng)
