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

    def run(blocks):
        """Simulate blocks (k, users, block) and add their sessions; yields each ranking k whose
        lanes of these blocks are all done."""
        owners, lanes = _lanes([(k, rankings[k], n, tasks[k], b) for k, n, b in blocks], moments)
        last = {k: j for j, (k, _) in enumerate(owners)}
        yield from dict.fromkeys(k for k, _, _ in blocks if k not in last)  # all drew undefined variants
        for j, ((k, v), sessions) in enumerate(zip(owners, BATCHES[engine](inner, lanes))):
            (moments[k] if v is None else moments[k].parts[v]).add(*sessions)
            if last[k] == j:
                yield k

    if target_stderr is None:  # a known number of blocks: all blocks of all rankings in one batch
        blocks = -(-users // BLOCK)
        for _ in run([(k, min(BLOCK, users - b * BLOCK), b) for k in range(len(rankings)) for b in range(blocks)]):
            if done is not None:
                done()
        return moments
    todo = list(range(len(rankings)))
    blocks = -(-max_users // BLOCK)
    for block in range(blocks):
        n = min(BLOCK, max_users - block * BLOCK)
        for k in run([(k, n, block) for k in todo]):
            if done is not None and (block == blocks - 1 or _precise(moments[k], model, target_stderr)):
                done()
        todo = [k for k in todo if not _precise(moments[k], model, target_stderr)]
        if not todo:
            break
    return moments


def _lanes(blocks: list, moments: list) -> tuple[list, list]:
    """The engine's lanes of blocks (k, ranking, users, task, block), and whose each lane is:
    (k, variant or None). A :class:`Mixed` ranking's block draws each user's variant from the
    block's stream, then is one lane per variant drawn, on the stream of (task, block, variant)
    (:mod:`usermodels.mixture`); the users who drew a variant where the inner user is undefined
    read nothing (G = N = 0), added to ``moments`` at once."""
    owners, lanes = [], []
    for k, ranking, users, task, block in blocks:
        if not isinstance(ranking, Mixed):
            owners.append((k, None))
            lanes.append((ranking, users, block_rng(task, block)))
            continue
        counts = ranking.counts(block_rng(task, block), users)
        for v in np.flatnonzero(counts).tolist():
            if not ranking.defined[v]:
                moments[k].parts[v].add(*np.zeros((3, counts[v])))
                continue
            owners.append((k, v))
            lanes.append((ranking.variants[v], int(counts[v]), variant_rng(task, block, v)))
    return owners, lanes


def _precise(moments: Moments, model, target_stderr: float) -> bool:
    """Whether a ranking's simulation has reached the target standard error (after two blocks)."""
    se = moments.estimate(model.aggregation)[1]
    return moments.users >= 2 * BLOCK and bool(np.isfinite(se)) and se <= target_stderr
