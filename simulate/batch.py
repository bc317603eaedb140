"""The batch driver: a model's sessions on many rankings at once, in blocks of users with their own streams.

Each ranking's users are drawn in blocks of :data:`simulate.ranking.BLOCK`, block b from the
stream ``block_rng(task, b)``, so a ranking's sessions are the same whichever rankings it is
simulated with, and on whichever engine's batch (``BATCHES``) they run.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from rpdi.simulate import agents, vector
from rpdi.simulate.estimators import MixedMoments, Moments
from rpdi.simulate.ranking import BLOCK, Mixed, block_rng, variant_rng

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
    moments = [MixedMoments(len(r.variants)) if isinstance(r, Mixed) else Moments() for r in rankings]
    inner = getattr(model, "inner", model)  # a mixture's users are the inner model's, per variant
    if target_stderr is None:  # a known number of blocks: all blocks of all rankings in one batch
        blocks = -(-users // BLOCK)
        owners, lanes = _lanes([(k, rankings[k], min(BLOCK, users - b * BLOCK), tasks[k], b)
                                for k in range(len(rankings)) for b in range(blocks)])
        left = [blocks] * len(rankings)  # blocks of each ranking not yet simulated
        for (k, v, last), sessions in zip(owners, BATCHES[engine](inner, lanes)):
            (moments[k] if v is None else moments[k].parts[v]).add(*sessions)
            left[k] -= last
            if done is not None and last and not left[k]:
                done()
        return moments
    todo = list(range(len(rankings)))
    blocks = -(-max_users // BLOCK)
    for block in range(blocks):
        n = min(BLOCK, max_users - block * BLOCK)
        owners, lanes = _lanes([(k, rankings[k], n, tasks[k], block) for k in todo])
        last = block == blocks - 1
        for (k, v, end), sessions in zip(owners, BATCHES[engine](inner, lanes)):
            (moments[k] if v is None else moments[k].parts[v]).add(*sessions)
            if end and done is not None and (last or _precise(moments[k], model, target_stderr)):
                done()
        todo = [k for k in todo if not _precise(moments[k], model, target_stderr)]
        if not todo:
            break
    return moments


def _lanes(blocks: list) -> tuple[list, list]:
    """The engine's lanes of blocks (k, ranking, users, task, block), and whose each lane is:
    (k, variant or None, whether it is the block's last lane). A :class:`Mixed` ranking's block
    draws each user's variant from the block's stream, then is one lane per variant drawn, on
    the stream of (task, block, variant) (:mod:`usermodels.mixture`)."""
    owners, lanes = [], []
    for k, ranking, users, task, block in blocks:
        if not isinstance(ranking, Mixed):
            owners.append((k, None, True))
            lanes.append((ranking, users, block_rng(task, block)))
            continue
        counts = ranking.counts(block_rng(task, block), users)
        drawn = np.flatnonzero(counts)
        for v in drawn:
            owners.append((k, int(v), v == drawn[-1]))
            lanes.append((ranking.variants[v], int(counts[v]), variant_rng(task, block, int(v))))
    return owners, lanes


def _precise(moments: Moments, model, target_stderr: float) -> bool:
    """Whether a ranking's simulation has reached the target standard error (after two blocks)."""
    se = moments.estimate(model.aggregation)[1]
    return moments.users >= 2 * BLOCK and bool(np.isfinite(se)) and se <= target_stderr
