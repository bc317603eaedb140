"""One ranking as a simulated user meets it: the model's gains, prefix summaries, start states."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from usermodels.base import At, Branch, BrowsingModel

BLOCK = 1 << 14  # users per random stream: results do not depend on how blocks are batched


@dataclass(frozen=True)
class Ranking:
    """What the engines need of one (run, topic): gains by rank (0 past the end), the number of
    documents retrieved, prefix sums and maxima of the gains, and the start-state distribution."""

    gains: np.ndarray  # (W,)
    length: int
    seen: np.ndarray  # (W,) sum of gains of ranks 1..i
    best: np.ndarray  # (W,) largest gain of ranks 1..i-1
    start: np.ndarray  # (K,) probabilities of the starting states
    convention: str
    horizon: int

    def at(self, i: int) -> At:
        """What the user meets at rank i (1-based); past the view: a zero-gain tail."""
        W = len(self.gains)
        j = min(i, W) - 1
        if i <= W:
            return At(i, self.gains[j], self.seen[j], self.best[j])
        last = max(self.best[-1], self.gains[-1]) if W else 0.0
        return At(i, 0.0, self.seen[-1] if W else 0.0, last)

    def ends_at(self, i: int) -> bool:
        """Whether a user who has read rank i must stop there (end of list, or the horizon)."""
        return i >= self.horizon or (self.convention == "stop" and i >= self.length)


def rankings_for(model: BrowsingModel, view, convention: str, horizon: int | None = None) -> dict:
    """{(s, t): Ranking} for every row of a :class:`metrics.view.View` cut at the model's depth."""
    gains = model.gains(view.grade, view)
    start = model.initial(view)
    seen = np.cumsum(gains, axis=-1)
    best = np.maximum.accumulate(np.concatenate([np.zeros(gains.shape[:-1] + (1,)), gains[..., :-1]], -1), -1)
    horizon = model.horizon if horizon is None else horizon
    S, T = gains.shape[:2]
    return {(s, t): Ranking(gains[s, t], int(view.length[s, t]), seen[s, t], best[s, t], start[s, t],
                            convention, horizon)
            for s in range(S) for t in range(T)}


def stream(seed: int, *key: str) -> np.random.SeedSequence:
    """A SeedSequence keyed by the task's identity (e.g. run, topic, measure), not by order."""
    digest = hashlib.blake2b("\x00".join(key).encode(), digest_size=16).digest()
    return np.random.SeedSequence([seed, *np.frombuffer(digest, dtype=np.uint32).tolist()])


def block_rng(task: np.random.SeedSequence, block: int) -> np.random.Generator:
    """The generator of one block of BLOCK users of a task."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(task.entropy, spawn_key=(block,))))


def choose(branches: list[Branch], u: np.ndarray, state: np.ndarray) -> tuple:
    """Pick each user's branch by one uniform draw u: (gain, continue, next state, time)."""
    shape = state.shape
    probs = np.stack([np.broadcast_to(np.asarray(b.prob, dtype=float), shape) for b in branches])
    j = np.minimum((u >= np.cumsum(probs, axis=0)).sum(axis=0), len(branches) - 1)
    pick = lambda xs: np.choose(j, [np.broadcast_to(np.asarray(x), shape) for x in xs])  # noqa: E731
    gain = pick([b.gain for b in branches]).astype(float)
    cont = pick([b.cont for b in branches]).astype(bool)
    time = pick([b.time for b in branches]).astype(float)
    if all(b.state is None for b in branches):
        return gain, cont, state, time
    return gain, cont, pick([state if b.state is None else b.state for b in branches]), time
