"""One ranking as a simulated user meets it: the model's gains, prefix summaries, start states."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpdi.metrics.view import View
from rpdi.usermodels.base import At, Branch, BrowsingModel
from rpdi.usermodels.exact import exact
from rpdi.usermodels.mixture import Mixture

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
    values: np.ndarray | None = None  # (K,) what step receives as each state (None: 0..K-1)
    words: np.ndarray | None = None  # (W,) document lengths in words, if the run gives them

    def draw_start(self, model: BrowsingModel, rng: np.random.Generator, users: int) -> np.ndarray:
        """Start states of ``users`` users (the model's draw: one uniform each by default)."""
        values = np.arange(len(self.start)) if self.values is None else self.values
        return model.draw_start(rng, users, self.start, values)

    def at(self, i: int) -> At:
        """What the user meets at rank i (1-based); past the view: a zero-gain tail."""
        W = len(self.gains)
        j = min(i, W) - 1
        if i <= W:
            return At(i, self.gains[j], self.seen[j], self.best[j],
                      np.nan if self.words is None else self.words[j])
        last = max(self.best[-1], self.gains[-1]) if W else 0.0
        return At(i, 0.0, self.seen[-1] if W else 0.0, last)

    def ends_at(self, i: int) -> bool:
        """Whether a user who has read rank i must stop there (end of list, or the horizon)."""
        return i >= self.horizon or (self.convention == "stop" and i >= self.length)


@dataclass(frozen=True)
class Mixed:
    """A ranking a user of a :class:`usermodels.mixture.Mixture` meets: one :class:`Ranking` per
    variant and the variants' probabilities (``shares``, (V,)); a user draws one at the start."""

    variants: tuple[Ranking, ...]
    shares: np.ndarray
    defined: np.ndarray  # (V,) bool: the inner user is defined on the variant (else it reads nothing)

    def counts(self, rng: np.random.Generator, users: int) -> np.ndarray:
        """How many of ``users`` users draw each variant: one uniform each from ``rng``, the
        variant v with u * sum(shares) < shares_1 + ... + shares_v."""
        cum = np.cumsum(self.shares)
        v = np.minimum(np.searchsorted(cum, rng.random(users) * cum[-1], side="right"), len(cum) - 1)
        return np.bincount(v, minlength=len(cum))


def variant_rng(task: np.random.SeedSequence, block: int, variant: int) -> np.random.Generator:
    """The generator of the users of one block of a task who drew one variant."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(task.entropy, spawn_key=(block, variant))))


def rankings_for(model: BrowsingModel, view, convention: str, horizon: int | None = None) -> dict:
    """{(s, t): Ranking} for every row of a :class:`metrics.view.View` cut at the model's depth
    (a :class:`Mixed` of the variants' for a mixture)."""
    if isinstance(model, Mixture):
        variants, weights = model.variants(view.rankings)
        rows = [rankings_for(model.inner, View(r, model.k), convention, horizon) for r in variants]
        # the variants where the inner user is defined, as the exact evaluator finds them
        defined = np.stack([np.isfinite(exact(model.inner, r, convention, horizon).value) for r in variants], -1)
        shares = model.shares(weights, defined.shape)
        return {key: Mixed(tuple(r[key] for r in rows), shares[key], defined[key]) for key in rows[0]}
    gains = model.gains(view.grade, view)
    start = model.initial(view)
    seen = np.cumsum(gains, axis=-1)
    best = np.maximum.accumulate(np.concatenate([np.zeros(gains.shape[:-1] + (1,)), gains[..., :-1]], -1), -1)
    horizon = model.horizon if horizon is None else horizon
    values = np.asarray(model.state_values(view))
    S, T = gains.shape[:2]
    return {(s, t): Ranking(gains[s, t], int(view.length[s, t]), seen[s, t], best[s, t], start[s, t],
                            convention, horizon, values, None if view.words is None else view.words[s, t])
            for s in range(S) for t in range(T)}


def block_rng(task: np.random.SeedSequence, block: int) -> np.random.Generator:
    """The generator of one block of BLOCK users of a task."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(task.entropy, spawn_key=(block,))))


def blocks(task: np.random.SeedSequence, users: int):
    """The ``users`` users of a task in blocks, in order: (size, generator) pairs of BLOCK users
    each (the last one fewer), each block with its own stream."""
    for block, first in enumerate(range(0, users, BLOCK)):
        yield min(BLOCK, users - first), block_rng(task, block)


def choose(branches: list[Branch], u: np.ndarray, state: np.ndarray, counts: np.ndarray | None = None) -> tuple:
    """Pick each user's branch by one uniform draw u: (gain, continue, next state, time, pick).

    Branch values are scalars or arrays with one entry per *row*, the users grouped by row:
    the first counts[0] users meet row 0, the next counts[1] row 1, ... (``counts`` None: one
    row per user), so branches worked out once per ranking serve all its users. User j takes
    the first branch b with u_j < prob_1 + ... + prob_b (the last one if none), the cumulative
    sums taken in branch order. ``cont`` is a fresh bool array of u's shape; ``gain`` and
    ``time`` are float arrays, or plain floats when every branch has the same scalar value;
    ``state`` (one per user) is returned as given when no branch moves it. ``pick(values)``
    gives each user the value of the branch it took, from one value (scalar or per row) per
    branch.
    """
    shape = u.shape

    def users(x):
        """A branch value (scalar or per row) per user; scalars stay scalars."""
        if counts is None or type(x) in (bool, int, float) or np.ndim(x) == 0:
            return x
        if counts.size == 1:  # one row: a scalar serves all its users
            return np.asarray(x).item()
        return np.repeat(x if np.shape(x) == counts.shape else np.broadcast_to(x, counts.shape), counts)

    if len(branches) == 1:  # a deterministic step: nothing to draw
        only = branches[0]
        nxt = state if only.state is None else np.broadcast_to(users(only.state), shape)
        return (_value(users(only.gain)), _fresh_bool(users(only.cont), shape), nxt, _value(users(only.time)),
                lambda xs: users(xs[0]))
    if len(branches) == 2:  # most models: one comparison u >= prob_1 picks the second branch
        first, second = branches
        first_prob = _float(users(first.prob))
        if first.cont is True and second.cont is False:  # read on or stop (geometric)
            cont = u < first_prob  # the draw itself says who reads on
            alike = (first.state is None and second.state is None and _same(first.gain, second.gain)
                     and _same(first.time, second.time))
            took_second = None if alike else ~cont  # alike branches: nothing else needs the draw
        else:
            took_second = u >= first_prob
            cont = (took_second.copy() if first.cont is False and second.cont is True
                    else _fresh_bool(np.where(took_second, users(second.cont), users(first.cont)), shape))
        if first.state is None and second.state is None:
            nxt = state
        else:
            nxt = np.broadcast_to(np.where(took_second, state if second.state is None else users(second.state),
                                           state if first.state is None else users(first.state)), shape)

        def pick2(xs):
            if _same(xs[0], xs[1]):
                return _value(users(xs[0]))
            return np.where(~cont if took_second is None else took_second, users(xs[1]), users(xs[0])).astype(
                float, copy=False)

        return pick2([first.gain, second.gain]), cont, nxt, pick2([first.time, second.time]), pick2
    # the general case: the index of the branch taken counts the cumulative sums u has passed
    # (the last sum is never needed: past the others the last branch is taken)
    cumulative = _float(branches[0].prob)
    index = (u >= users(cumulative)).astype(np.intp)
    for b in branches[1:-1]:
        cumulative = cumulative + _float(b.prob)
        index += u >= users(cumulative)

    cell = []  # each user's place in a (row, branch) table, worked out once

    def pick(xs, kind=float):
        """Each user's value of the branch taken, from a (row, branch) table of the values."""
        if all(_same(xs[0], x) for x in xs[1:]):
            return kind(xs[0]) if type(xs[0]) in (bool, int, float, np.float64) else users(np.asarray(xs[0], kind))
        table = np.stack(np.broadcast_arrays(*(np.asarray(x) for x in xs)), axis=-1)
        if table.ndim == 1:
            return table[index].astype(kind, copy=False)
        if not cell:
            first = np.arange(shape[0]) if counts is None else np.repeat(np.arange(counts.size), counts)
            cell.append(first * len(xs) + index)
        return table.reshape(-1)[cell[0]].astype(kind, copy=False)

    gain = pick([b.gain for b in branches])
    cont = _fresh_bool(pick([b.cont for b in branches], bool), shape)
    time = pick([b.time for b in branches])
    if all(b.state is None for b in branches):
        return gain, cont, state, time, pick
    choices = [np.broadcast_to(state if b.state is None else users(b.state), shape) for b in branches]
    return gain, cont, np.choose(index, choices), time, pick


def _fresh_bool(x, shape):
    """x as a new, writable bool array of the given shape."""
    if type(x) is bool:
        return np.full(shape, x)
    x = np.asarray(x, dtype=bool)
    return x.copy() if x.shape == shape else np.array(np.broadcast_to(x, shape))


def _float(p):
    return p if type(p) is float else np.asarray(p, dtype=float)


def _value(x):
    """A branch value as float: a plain float for a scalar, else a float array."""
    if isinstance(x, float):  # float and numpy's float64
        return float(x)
    x = np.asarray(x, dtype=float)
    return x.item() if x.ndim == 0 else x


def _same(x0, x1) -> bool:
    """Whether two branch values are the same object or the same scalar."""
    return x0 is x1 or (type(x0) is type(x1) and type(x0) in (float, int, np.float64) and x0 == x1)
