"""The batch driver: a model's sessions on many rankings at once, in blocks of users with their own streams.

Each ranking's users are drawn in blocks of :data:`simulate.ranking.BLOCK`, block b from the
stream ``block_rng(task, b)``, so a ranking's sessions are the same whichever rankings it is
simulated with, and on whichever engine's batch (``BATCHES``) they run.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from rpdi.simulate import agents, vector
from rpdi.simulate.estimators import Moments
from rpdi.simulate.ranking import BLOCK, block_rng

BATCHES = {"vector": vector.batch, "agent": agents.batch}  # many rankings at once (yielded), the same sessions


def simulate_ranking(model, ranking, users: int, task: np.random.SeedSequence, engine: str = "vector",
                     target_stderr: float | None = None, max_users: int = 10_000_000) -> Moments:
    """Moments of simulated sessions on one ranking, in blocks of BLOCK users with their own
    streams: ``users`` sessions, or with ``target_stderr`` as many blocks as it takes (at most
    ``max_users``) for the model's aggregation to reach that standard error."""
    return simulate_rankings(model, [ranking], users, [task], engine, target_stderr, max_users)[0]


def simulate_rankings(model, rankings: list, users: int, tasks: list, engine: str = "vector",
                      target_stderr: float | None = None, max_users: int = 10_000_000,
                      done: Callable[[], None] | None = None) -> list[Moments]:
    """:func:`simulate_ranking` of each ranking with its task, all at once: every block of every
    ranking is one lane of the engine's batch (the vector engine advances them together), or,
    with ``target_stderr``, block b of every ranking still simulating is one batch; each
    ranking's Moments are the same as simulated alone. ``done()`` is called as each ranking is
    finished (a progress bar's tick)."""
    moments = [Moments() for _ in rankings]
    if target_stderr is None:  # a known number of blocks: all blocks of all rankings in one batch
        blocks = -(-users // BLOCK)
        lanes = [(ranking, min(BLOCK, users - b * BLOCK), block_rng(task, b))
                 for ranking, task in zip(rankings, tasks) for b in range(blocks)]
        for lane, sessions in enumerate(BATCHES[engine](model, lanes)):
            moments[lane // blocks].add(*sessions)
            if done is not None and lane % blocks == blocks - 1:
                done()
        return moments
    todo = list(range(len(rankings)))
    blocks = -(-max_users // BLOCK)
    for block in range(blocks):
        n = min(BLOCK, max_users - block * BLOCK)
        lanes = [(rankings[k], n, block_rng(tasks[k], block)) for k in todo]
        last = block == blocks - 1
        for k, sessions in zip(todo, BATCHES[engine](model, lanes)):
            moments[k].add(*sessions)
            if done is not None and (last or _precise(moments[k], model, target_stderr)):
                done()
        todo = [k for k in todo if not _precise(moments[k], model, target_stderr)]
        if not todo:
            break
    return moments


def _precise(moments: Moments, model, target_stderr: float) -> bool:
    """Whether a ranking's simulation has reached the target standard error (after two blocks)."""
    se = moments.estimate(model.aggregation)[1]
    return moments.users >= 2 * BLOCK and bool(np.isfinite(se)) and se <= target_stderr
