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

from dataclasses import dataclass

import numpy as np

from metrics.rankings import Rankings
from metrics.view import View
from usermodels.base import At, BrowsingModel

AGGREGATIONS = ("rate", "mean_rate", "total", "depth", "cost")
CONVENTIONS = ("unknown", "nonrelevant", "stop")


@dataclass
class Expectations:
    """Exact expectations per (run, topic), shape (S, T): ``values`` and, with unjudged
    documents (and under ``unknown`` the tail) at maximal gain, ``upper``. ``reach`` is V(i),
    ``stop`` is L(i) (both (S, T, ranks)), ``never`` the mass that never stops."""

    model: BrowsingModel
    values: dict[str, np.ndarray]
    upper: dict[str, np.ndarray]
    reach: np.ndarray
    stop: np.ndarray
    never: np.ndarray

    @property
    def value(self) -> np.ndarray:
        """The expectation the model declares equal to its closed form."""
        return self.values[self.model.aggregation]

    @property
    def residual(self) -> np.ndarray:
        """Width of the interval [value, upper] of the model's aggregation."""
        return self.upper[self.model.aggregation] - self.value


def exact(model: BrowsingModel, rankings: Rankings, convention: str = "unknown",
          horizon: int | None = None, tol: float = 1e-15) -> Expectations:
    """Exact expectations of ``model`` on every ranking (``horizon`` defaults to the model's)."""
    horizon = model.horizon if horizon is None else horizon
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, not {convention!r}")
    view = View(rankings, model.k)
    top = np.full(view.grade.shape[:2] + (1,), view.max_grade)
    tail_max = model.gains(top, view)
    lower_g = model.gains(view.grade, view)
    unknown = ~view.judged if convention != "unknown" else ~(view.judged & view.retrieved)
    if convention != "unknown":
        unknown &= view.retrieved
    upper_g = np.where(unknown, tail_max, lower_g)
    lo = _propagate(model, view, lower_g, np.zeros_like(tail_max), convention, horizon, tol)
    up = _propagate(model, view, upper_g, tail_max if convention == "unknown" else np.zeros_like(tail_max),
                    convention, horizon, tol)
    if model.normalised:
        ideal = _ideal_propagation(model, rankings, convention, horizon, tol)
        for a in ("total", "rate", "mean_rate"):
            lo.values[a] = _ratio(lo.values[a], ideal[a])
            up.values[a] = _ratio(up.values[a], ideal[a])
    return Expectations(model, lo.values, up.values, lo.reach, lo.stop, lo.never)


@dataclass
class _Run:
    values: dict[str, np.ndarray]
    reach: np.ndarray
    stop: np.ndarray
    never: np.ndarray


def _propagate(model, view: View, gains, tail_gain, convention, horizon, tol) -> _Run:
    S, T, W = gains.shape
    m = model.initial(view).astype(float)  # (S, T, K)
    K = m.shape[-1]
    defined = m.sum(-1) > 0
    h = np.zeros_like(m)
    states = np.arange(K)
    length = view.length
    reach, stops = [], []
    g_stop = np.zeros((S, T))  # E[G 1{stopped}]
    n_stop = np.zeros((S, T))  # E[N 1{stopped}]
    rate_stop = np.zeros((S, T))  # E[G/N 1{stopped}]
    cost = np.zeros((S, T))  # E[time spent]
    never = np.zeros((S, T))
    g_never = np.zeros((S, T))
    seen = np.zeros((S, T, 1))
    best = np.zeros((S, T, 1))
    if convention == "stop":  # an empty ranking: the user reads nothing
        empty = (length == 0)[..., None]
        m = np.where(empty, 0.0, m)
    i = 0
    while True:
        i += 1
        alive = m.sum(-1)
        if i > W and (i > horizon or alive.max(initial=0.0) <= tol):
            break
        g = gains[..., i - 1: i] if i <= W else tail_gain
        zero_tail = (i > length)[..., None] & (tail_gain == 0)  # zero-gain padding from here on
        if zero_tail.any():
            absorbed = zero_tail & np.asarray(model.absorbed(states, i), dtype=bool)
            if absorbed.any():
                never += (m * absorbed).sum(-1)
                g_never += (h * absorbed).sum(-1)
                m = np.where(absorbed, 0.0, m)
                h = np.where(absorbed, 0.0, h)
                alive = m.sum(-1)
        reach.append(alive)
        seen = seen + g
        last = (i >= horizon) | ((convention == "stop") & (length == i))[..., None]
        m_next = np.zeros_like(m)
        h_next = np.zeros_like(h)
        stop_mass = np.zeros((S, T))
        stop_gain = np.zeros((S, T))
        for br in model.step(states, At(i, g, seen, best)):
            p = np.broadcast_to(np.asarray(br.prob, dtype=float), m.shape)
            pm = m * p
            ph = (h + m * np.asarray(br.gain, dtype=float)) * p
            cost += (pm * np.asarray(br.time, dtype=float)).sum(-1)
            cont = np.broadcast_to(np.asarray(br.cont, dtype=bool), m.shape) & ~last
            stop_mass += np.where(cont, 0.0, pm).sum(-1)
            stop_gain += np.where(cont, 0.0, ph).sum(-1)
            survive = model.survival(br.time)
            if model.halflife is not None:  # the budget ends some continuing sessions here
                out = np.where(cont, 1.0 - survive, 0.0)
                stop_mass += (pm * out).sum(-1)
                stop_gain += (ph * out).sum(-1)
                pm, ph = pm * survive, ph * survive
            if br.state is None:
                m_next += np.where(cont, pm, 0.0)
                h_next += np.where(cont, ph, 0.0)
            else:
                nxt = np.broadcast_to(np.asarray(br.state), m.shape)
                m_next += _scatter(np.where(cont, pm, 0.0), nxt, K)
                h_next += _scatter(np.where(cont, ph, 0.0), nxt, K)
        stops.append(stop_mass)
        g_stop += stop_gain
        n_stop += i * stop_mass
        rate_stop += stop_gain / i
        m, h = m_next, h_next
        best = np.maximum(best, g)
    total = g_stop + g_never
    depth = np.where(never > 0, np.inf, n_stop)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(depth > 0, total / depth, 0.0)
    values = {"total": total, "depth": depth, "cost": np.where(never > 0, np.inf, cost), "rate": rate,
              "mean_rate": rate_stop}
    values = {k: np.where(defined, v, np.nan) for k, v in values.items()}
    return _Run(values, np.stack(reach, -1), np.stack(stops, -1), never)


def _scatter(values: np.ndarray, target: np.ndarray, K: int) -> np.ndarray:
    """out[..., j] = sum of values[..., s] over states s with target[..., s] == j."""
    rows = np.arange(values[..., 0].size).reshape(values.shape[:-1])[..., None]
    flat = np.bincount((rows * K + target).ravel(), weights=values.ravel(), minlength=values[..., 0].size * K)
    return flat.reshape(values.shape)


def _ratio(a, b):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def _ideal_propagation(model, rankings: Rankings, convention, horizon, tol) -> dict[str, np.ndarray]:
    """The model's expectations on each topic's ideal ranking (all judged grades, best first)."""
    ideal = rankings.ideal
    T, M = ideal.shape
    ideal_rankings = Rankings(("ideal",), rankings.topics, ideal[None], np.ones((1, T, M), bool),
                              np.zeros((1, T, M), np.int64), rankings.n_judged[None].copy(),
                              np.ones((1, T), bool), ideal, rankings.n_judged, rankings.max_grade)
    view = View(ideal_rankings, model.k)
    gains = model.gains(view.grade, view)
    run = _propagate(model, view, gains, np.zeros(gains.shape[:2] + (1,)), convention, horizon, tol)
    return run.values
