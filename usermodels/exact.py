"""The exact evaluator: probability propagated through (rank, state), with no sampling.

For every (run, topic) row it carries, per state, the probability mass m of users alive at rank
i and h = E[G 1{alive in that state}]. A step splits both over the model's branches; mass that
stops at rank i adds to the stopping distribution L(i) and its gain to E[G 1{N = i}]. Since
G/N = G/i for a user who stops at i, E[G/N] = sum_i E[G 1{N = i}] / i is linear too, so nothing
but these two arrays is needed. Cost grows as depth x states.

Beyond the ranking (``convention``):
  ``unknown``     (default) nothing relevant is known there: the value treats it as
                  non-relevant, the upper end of the interval as maximally relevant;
  ``nonrelevant`` padding with zero gain, known (trec_eval's habit): the interval comes from
                  unjudged documents only;
  ``stop``        the user stops at the end of the list.
Users still reading at ``horizon`` stop there (C/W/L's max_depth); users a model declares
absorbed in a zero-gain tail never stop (N infinite, G/N = 0: Robertson's AP user whose target
is never retrieved).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace

import numpy as np

from rpdi.choices import CONVENTIONS
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.errors import InputError
from rpdi.metrics.view import Score, View
from rpdi.usermodels.base import At, BrowsingModel
from rpdi.usermodels.mixture import Mixture
from rpdi.usermodels.result_frames import expectations_frame

AGGREGATIONS = ("rate", "mean_rate", "total", "depth", "cost")


@dataclass
class Expectations:
    """Exact expectations per (run, topic), shape (S, T): ``values`` and, with unjudged
    documents (and under ``unknown`` the tail) at maximal gain, ``upper``; ``variance`` the
    variance of one user's outcome behind each (for ``rate`` the delta method's
    Var(G - rate N)/E[N]^2), so a sample of n users has standard error sqrt(variance/n).
    ``reach`` is V(i),
    ``stop`` is L(i) (both (S, T, ranks)), ``never`` the mass that never stops; ``spent`` (S, T,
    ranks) the expected time spent at rank i, the per-rank terms of ``values["cost"]`` (a session
    user's chance of reading rank i, :mod:`usermodels.session`; None for a mixture)."""

    model: BrowsingModel
    values: dict[str, np.ndarray]
    upper: dict[str, np.ndarray]
    variance: dict[str, np.ndarray]  # per-user variance of each aggregation (rate: delta method)
    reach: np.ndarray
    stop: np.ndarray
    never: np.ndarray
    ideal: np.ndarray | None = None  # (T,) the same expectation on each topic's ideal ranking
    parts: tuple["Expectations", ...] = ()  # a mixture's: the inner model's on each variant
    shares: np.ndarray | None = None  # a mixture's (S, T, V) probabilities of the variants
    spent: np.ndarray | None = None  # (S, T, ranks) the expected time spent at each rank

    @property
    def value(self) -> np.ndarray:
        """The expectation the model declares equal to its closed form."""
        return self.values[self.model.aggregation]

    @property
    def residual(self) -> np.ndarray:
        """Width of the interval [value, upper] of the model's aggregation."""
        return self.upper[self.model.aggregation] - self.value


def exact(model: BrowsingModel, rankings: Rankings, convention: str = "unknown",
          horizon: int | None = None, tol: float = 1e-15, as_frame: bool = False,
          ranks: int | tuple | None = None) -> Expectations:
    """Exact expectations of ``model`` on every ranking (``horizon`` defaults to the model's);
    with ``as_frame`` a pandas DataFrame of them, one row per (run, topic, aggregation)
    (:func:`usermodels.result_frames.expectations_frame`). The rankings are built from qrels
    and runs in any form :func:`metrics.evaluate.evaluate` takes (paths, DataFrames, dicts).

    The value (unjudged documents and the tail at their minimum) and the upper end of the
    interval are propagated together, stacked along the run axis; once only where they are the
    same (every retrieved document judged, and the tail not valued as unknown).

    The propagation goes on, rank after rank, until the users still reading on every ranking it
    carries are below ``tol`` (or the horizon), so a ranking's last bits depend on the rankings
    evaluated with it. ``ranks`` (:func:`extent`), the ranks propagated on a whole collection,
    makes a part of it (a batch of runs) propagate that far too: its values are then the
    collection's, bit for bit.

    >>> import pandas as pd
    >>> from rpdi.metrics import build_rankings, load_qrels, load_runs
    >>> from rpdi.usermodels.rbp import RBP
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [0, 1]})
    >>> run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> frame = exact(RBP(p=0.5), build_rankings(load_qrels(qrels), load_runs(run)), as_frame=True)
    >>> frame.query("aggregation == 'rate'")[["run", "topic", "value"]]  # (1 - p) * p * 1
       run topic  value
    3  run    q1   0.25
    """
    if as_frame:
        return expectations_frame(exact(model, rankings, convention, horizon, tol, ranks=ranks), rankings)
    horizon = model.horizon if horizon is None else horizon
    if convention not in CONVENTIONS:
        raise InputError(f"convention must be one of {CONVENTIONS}, not {convention!r}")
    if isinstance(model, Mixture):
        return _mixed(model, rankings, convention, horizon, tol, ranks)
    view = View(rankings, model.k)
    S = view.grade.shape[0]
    tail_max = model.gains(np.full(view.grade.shape[:2] + (1,), view.max_grade), view)
    lower_g = model.gains(view.grade, view)
    unknown = ~view.judged & view.retrieved
    if convention == "unknown":
        unknown |= ~view.retrieved
    upper_g = np.where(unknown, tail_max, lower_g)
    tail = np.concatenate([np.zeros_like(tail_max), tail_max if convention == "unknown" else np.zeros_like(tail_max)])
    start = model.initial(view)
    copies = 1 if convention != "unknown" and not unknown.any() else 2  # the upper end differs?
    words = None if view.words is None else np.concatenate([view.words] * copies)
    both = _propagate(model, np.concatenate([start] * copies), model.state_values(view),
                      np.concatenate([lower_g, upper_g][:copies]), tail[:copies * S],
                      np.concatenate([view.length] * copies), convention, horizon, tol, words, ranks or 0)
    lower = {k: v[:S] for k, v in both.values.items()}
    upper = {k: v[-S:] for k, v in both.values.items()}
    variance = {k: v[:S] for k, v in both.variance.items()}
    ideal = None
    if model.normalised:
        ideal = _ideal_propagation(model, rankings, convention, horizon, tol)
        for a in ("total", "rate", "mean_rate"):
            lower[a], upper[a] = _ratio(lower[a], ideal[a]), _ratio(upper[a], ideal[a])
            variance[a] = _ratio(variance[a], ideal[a] ** 2)
        ideal = ideal[model.aggregation][0]
    return Expectations(model, lower, upper, variance, both.reach[:S], both.stop[:S], both.never[:S],
                        ideal, spent=both.spent[:S])


def _mixed(model: Mixture, rankings: Rankings, convention, horizon, tol, ranks) -> Expectations:
    """A mixture's expectations (:mod:`usermodels.mixture`): the inner model's on every variant,
    weighted by the variants' shares; the per-user variance adds the spread between variants.
    ``ranks``: each variant's ranks propagated at least (None: as far as they need)."""
    variants, weights = model.variants(rankings)
    ranks = [None] * len(variants) if ranks is None else ranks
    parts = tuple(exact(model.inner, r, convention, horizon, tol, ranks=n)
                  for r, n in zip(variants, ranks, strict=True))
    p = model.shares(weights, parts[0].value.shape + (len(parts),))
    some = (p > 0).any(-1)

    def mean(arrays):  # sum_v p_v x_v; NaN where no variant has a weight
        x = np.where(p > 0, np.stack(arrays, -1), 0.0)
        return np.where(some, (p * x).sum(-1), np.nan)

    # a variant where the inner user is undefined counts 0: its users read nothing
    ok = [np.isfinite(x.value) for x in parts]
    part = lambda x, d, key: {a: np.where(d, v, 0.0) for a, v in getattr(x, key).items()}  # noqa: E731
    values_v, upper_v, variance_v = ([part(x, d, key) for x, d in zip(parts, ok)] for key in ("values", "upper", "variance"))
    values = {a: mean([v[a] for v in values_v]) for a in values_v[0]}
    upper = {a: mean([v[a] for v in upper_v]) for a in upper_v[0]}
    with np.errstate(invalid="ignore"):  # inf - inf where users never stop
        variance = {a: mean([var[a] + (v[a] - values[a]) ** 2 for var, v in zip(variance_v, values_v)])
                    for a in variance_v[0]}
    width = max(x.reach.shape[-1] for x in parts)
    pad = lambda a: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - a.shape[-1])])  # noqa: E731
    linear = lambda arrays: np.nan_to_num(mean([np.where(d, a, 0.0) for a, d in zip(arrays, ok)]))  # noqa: E731
    reach = np.moveaxis(linear([np.moveaxis(pad(x.reach), -1, 0) for x in parts]), 0, -1)
    stop = np.moveaxis(linear([np.moveaxis(pad(x.stop), -1, 0) for x in parts]), 0, -1)
    ideal = None
    ideal_variants = model.ideal_variants(rankings)
    if ideal_variants is not None:  # normalised as a whole: by the mixture's value on one ideal ranking
        best = [exact(model.inner, r, convention, horizon, tol).values for r in ideal_variants]
        ideal = (p[0] * np.stack([np.nan_to_num(b[model.aggregation][0]) for b in best], -1)).sum(-1)
        for a in ("total", "rate", "mean_rate"):
            values[a], upper[a] = _ratio(values[a], ideal), _ratio(upper[a], ideal)
            variance[a] = _ratio(variance[a], ideal ** 2)
    return Expectations(model, values, upper, variance, reach, stop, linear([x.never for x in parts]),
                        ideal=ideal, parts=parts, shares=p)


def extent(expectations: Expectations) -> int | tuple:
    """The ranks the exact evaluator propagated to give ``expectations`` (a mixture's: a tuple of
    its variants'), the ``ranks`` of :func:`exact` that give a part of the rankings their values
    among all; over parts, the widest of each (:func:`wider`).

    >>> from rpdi.metrics.evaluate import rankings_from_grades
    >>> from rpdi.usermodels import model_for
    >>> extent(exact(model_for("RR"), rankings_from_grades("-$-")))
    2
    """
    if expectations.parts:
        return tuple(extent(part) for part in expectations.parts)
    return expectations.reach.shape[-1]


def alike(a: int | tuple, b: int | tuple) -> bool:
    """Whether two extents (:func:`extent`) of one model are of parts alike, as :func:`wider`
    needs: a mixture's as many variants, each alike. A mixture whose number of variants depends
    on the rankings gives batches of runs extents unlike.

    >>> alike((3, 5), (4, 2)), alike((3, 5), (3, 5, 1)), alike(2, (2,))
    (True, False, False)
    """
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(alike(x, y) for x, y in zip(a, b))
    return not isinstance(a, tuple) and not isinstance(b, tuple)


def wider(a: int | tuple, b: int | tuple) -> int | tuple:
    """The extent (:func:`extent`) that covers both ``a`` and ``b``, two parts' of the same
    model: the longer propagation of each variant.

    >>> wider((3, 5), (4, 2))
    (4, 5)
    """
    if isinstance(a, tuple):
        return tuple(wider(x, y) for x, y in zip(a, b, strict=True))
    return max(a, b)


@dataclass(frozen=True)
class ExactValue:
    """The ``compute`` of a measure declared by its browsing model: the model's exact
    expectation on the view's rankings (to the view's cutoff), with its residual. ``text``: the
    name the user gave (a model's errors quote it)."""

    model_class: type
    text: str | None = None

    def __call__(self, view: View, **params) -> Score:
        params.pop("cutoff", None)  # passed by a session user's declaration (passes_cutoff): the view's
        measure = self.model_class.declaration().measure(params, view.cutoff)
        model = self.model_class(measure if self.text is None else replace(measure, text=self.text))
        expected = exact(model, view.rankings, "unknown")
        return Score(expected.value, expected.residual)


@dataclass
class _Run:
    values: dict[str, np.ndarray]
    variance: dict[str, np.ndarray]
    reach: np.ndarray
    stop: np.ndarray
    never: np.ndarray
    spent: np.ndarray


# What the expectations need of the users who stop: E[G^a N^b 1{stopped}] for these (a, b).
_STOPPED = {"N": (0, 1), "N2": (0, 2), "G": (1, 0), "GN": (1, 1), "G2": (2, 0), "G/N": (1, -1),
            "(G/N)2": (2, -2)}
_GAIN_POWER = np.array([a for a, _ in _STOPPED.values()])
_RANK_POWER = np.array([b for _, b in _STOPPED.values()], dtype=float)


def _propagate(model, start, states, gains, tail_gain, length, convention, horizon, tol,
               words=None, ranks: int = 0) -> _Run:
    """Propagate the start distribution ``start`` (rows..., K) over the state values ``states``
    (K,) through ``gains`` (rows..., W), then a tail of gain ``tail_gain`` (rows..., 1) up to the
    horizon: ``ranks`` ranks at least, then while users on some row are still reading (more than
    ``tol``). Next states returned by a step are indices 0..K-1. ``words`` (rows..., W), if
    given, are the documents' lengths.

    The users still reading are carried as their moments ``alive[j]`` = E[G^j 1{alive in that
    state}], j = 0, 1, 2 (j = 0 is the probability mass); a branch of probability p and gain x
    maps them to p (m, h + x m, q + 2 x h + x^2 m). Those who stop at rank i add their moments,
    times powers of i, to the sums in ``_STOPPED``, from which :func:`_expectations` computes
    the values and variances."""
    rows = gains.shape[:-1]
    W = gains.shape[-1]
    mass = start.astype(float)
    K = mass.shape[-1]
    defined = mass.sum(-1) > 0
    if convention == "stop":  # an empty ranking: the user reads nothing
        mass = np.where((length == 0)[..., None], 0.0, mass)
    alive = np.stack([mass, np.zeros_like(mass), np.zeros_like(mass)])
    stopped = np.zeros((len(_STOPPED),) + rows)
    never = np.zeros((3,) + rows)  # moments of the users absorbed for ever
    cost = np.zeros(rows)
    reach, stops, spent = [], [], []
    seen = np.zeros(rows + (1,))
    best = np.zeros(rows + (1,))
    # ranks past which nothing is gained any more: users a model declares absorbed there never stop
    positive = gains > 0
    last_gain = np.zeros(rows, int)  # an empty ranking (W = 0) gains nothing
    if W:
        last_gain = np.where(positive.any(-1), W - np.argmax(positive[..., ::-1], axis=-1), 0)
    quiet_from = np.where(tail_gain[..., 0] == 0, last_gain, np.iinfo(np.int64).max)
    if convention == "stop":
        quiet_from[:] = np.iinfo(np.int64).max
    rank_power = _RANK_POWER.reshape((-1,) + (1,) * len(rows))
    i = 0
    while True:
        i += 1
        if i > horizon or (i > ranks and alive[0].sum(-1).max(initial=0.0) <= tol):
            break
        g = gains[..., i - 1: i] if i <= W else tail_gain
        quiet = (i > quiet_from)[..., None]
        if quiet.any():
            absorbed = quiet & np.asarray(model.absorbed(states, i), dtype=bool)
            if absorbed.any():
                never += (alive * absorbed).sum(-1)
                alive = np.where(absorbed, 0.0, alive)
        reach.append(alive[0].sum(-1))
        seen = seen + g
        last = (i >= horizon) | ((convention == "stop") & (length == i))[..., None]
        w = words[..., i - 1: i] if words is not None and i <= W else np.nan
        branches = model.step(states, At(i, g, seen, best, w))
        _check_branches(model, branches, alive[0] > 0, states, i)
        m, h, q = alive
        alive_next = np.zeros_like(alive)
        stop = np.zeros((3,) + rows)
        before = cost.copy()
        ending = last.any()
        for br in branches:
            x = br.gain
            taken = alive.copy()  # (m, h + x m, q + x (2 h + x m)) times the branch's probability
            taken[2] += x * (2 * h + x * m)
            taken[1] += x * m
            taken *= br.prob
            cost += (taken[0] * br.time).sum(-1)
            if type(br.cont) is bool and not ending and model.halflife is None:  # all alike
                if not br.cont:
                    stop += taken.sum(-1)
                    continue
            else:
                cont = np.logical_and(br.cont, ~last)
                if model.halflife is not None:  # the budget ends some continuing sessions here
                    cont_share = np.where(cont, model.survival(br.time), 0.0)
                else:
                    cont_share = np.where(cont, 1.0, 0.0)
                stop += (taken * (1 - cont_share)).sum(-1)
                taken *= cont_share
            if br.state is None:
                alive_next += taken
            else:
                alive_next += _scatter(taken, np.broadcast_to(np.asarray(br.state), taken.shape), K)
        stops.append(stop[0])
        spent.append(cost - before)
        stopped += stop[_GAIN_POWER] * float(i) ** rank_power
        alive = alive_next
        best = np.maximum(best, g)
    values, variance = _expectations(dict(zip(_STOPPED, stopped)), never, cost, defined)
    empty = np.zeros(rows + (0,))
    return _Run(values, variance, np.stack(reach, -1) if reach else empty,
                np.stack(stops, -1) if stops else empty, never[0], np.stack(spent, -1) if spent else empty)


def _expectations(stopped: dict[str, np.ndarray], never: np.ndarray, cost: np.ndarray,
                  defined: np.ndarray) -> tuple[dict, dict]:
    """Values and per-user variances of the aggregations from the stopping sums ``stopped``
    (see ``_STOPPED``) and the moments of the users who never stop (their N is infinite)."""
    forever = never[0] > 0
    total = stopped["G"] + never[1]
    depth = np.where(forever, np.inf, stopped["N"])
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(depth > 0, total / depth, 0.0)
        var_n = stopped["N2"] - stopped["N"] ** 2
        cov = stopped["GN"] - total * stopped["N"]
        var_g = stopped["G2"] + never[2] - total ** 2
        variance = {"total": var_g, "mean_rate": stopped["(G/N)2"] - stopped["G/N"] ** 2,
                    "depth": np.where(forever, np.nan, var_n),
                    "rate": np.where(forever | (depth == 0), 0.0,
                                     (var_g - 2 * rate * cov + rate ** 2 * var_n) / depth ** 2)}
    values = {"total": total, "depth": depth, "cost": np.where(forever, np.inf, cost), "rate": rate,
              "mean_rate": stopped["G/N"]}
    values = {k: np.where(defined, v, np.nan) for k, v in values.items()}
    variance = {k: np.where(defined, np.maximum(v, 0.0), np.nan) for k, v in variance.items()}
    return values, variance


def _check_branches(model, branches, visited, states, rank) -> None:
    """A model's step must give, at every (rank, state) the evaluator visits, finite branch
    probabilities in [0, 1] summing to 1 (to 1e-9) and finite gains; InputError names the model's
    file and class, the rank and the state otherwise (a model of one's own is not trusted)."""
    # the common case at once, on the arrays as given (NaN fails every comparison); only a model
    # that fails it is searched for the culprit, where users are
    total = 0.0
    for br in branches:
        p, x = np.asarray(br.prob, dtype=float), np.asarray(br.gain, dtype=float)
        if not (((p >= 0) & (p <= 1)).all() and np.isfinite(x).all()):
            break
        total = total + p
    else:
        if branches and (np.abs(total - 1) <= 1e-9).all():
            return
    if not visited.any():
        return
    probs = [np.broadcast_to(np.asarray(br.prob, dtype=float), visited.shape) for br in branches]
    gains = [np.broadcast_to(np.asarray(br.gain, dtype=float), visited.shape) for br in branches]
    total = sum(probs) if probs else np.zeros(visited.shape)

    def fail_where(bad, values, what):
        bad = bad & visited
        if bad.any():
            where = tuple(np.argwhere(bad)[0])
            state = np.broadcast_to(states, visited.shape)[where]
            raise InputError(f"{inspect.getsourcefile(inspect.unwrap(type(model).step))}: {type(model).__name__}: at rank "
                             f"{rank}, state {state}: " + what.format(values[where]))

    for b, (p, x) in enumerate(zip(probs, gains)):
        fail_where(~((p >= 0) & (p <= 1)), p, f"branch {b} has probability {{}}, not in [0, 1]")
        fail_where(~np.isfinite(x), x, f"branch {b} has gain {{}}, not a finite number")
    fail_where(~(np.abs(total - 1) <= 1e-9), total, "the branch probabilities sum to {}, not 1")


def _scatter(values: np.ndarray, target: np.ndarray, K: int) -> np.ndarray:
    """out[..., j] = sum of values[..., s] over states s with target[..., s] == j."""
    rows = np.arange(values[..., 0].size).reshape(values.shape[:-1])[..., None]
    flat = np.bincount((rows * K + target).ravel(), weights=values.ravel(), minlength=values[..., 0].size * K)
    return flat.reshape(values.shape)


def _ratio(a, b):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def _ideal_propagation(model, rankings: Rankings, convention, horizon, tol) -> dict[str, np.ndarray]:
    """The model's expectations on each topic's ideal ranking (:meth:`BrowsingModel.ideal_rankings`)."""
    view = View(model.ideal_rankings(rankings), model.k)
    gains = model.gains(view.grade, view)
    return _propagate(model, model.initial(view), model.state_values(view), gains,
                      np.zeros(gains.shape[:-1] + (1,)), view.length, convention, horizon, tol).values
