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

from rpdi.metrics.rankings import Rankings
from rpdi.metrics.view import View
from rpdi.usermodels.base import At, BrowsingModel

AGGREGATIONS = ("rate", "mean_rate", "total", "depth", "cost")
CONVENTIONS = ("unknown", "nonrelevant", "stop")


@dataclass
class Expectations:
    """Exact expectations per (run, topic), shape (S, T): ``values`` and, with unjudged
    documents (and under ``unknown`` the tail) at maximal gain, ``upper``; ``variance`` the
    variance of one user's outcome behind each (for ``rate`` the delta method's
    Var(G - rate N)/E[N]^2), so a sample of n users has standard error sqrt(variance/n).
    ``reach`` is V(i),
    ``stop`` is L(i) (both (S, T, ranks)), ``never`` the mass that never stops."""

    model: BrowsingModel
    values: dict[str, np.ndarray]
    upper: dict[str, np.ndarray]
    variance: dict[str, np.ndarray]  # per-user variance of each aggregation (rate: delta method)
    reach: np.ndarray
    stop: np.ndarray
    never: np.ndarray
    ideal: np.ndarray | None = None  # (T,) the same expectation on each topic's ideal ranking

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
    """Exact expectations of ``model`` on every ranking (``horizon`` defaults to the model's).

    The value (unjudged documents and the tail at their minimum) and the upper end of the
    interval are propagated together, stacked along the run axis.
    """
    horizon = model.horizon if horizon is None else horizon
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, not {convention!r}")
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
    words = None if view.words is None else np.concatenate([view.words, view.words])
    both = _propagate(model, np.concatenate([start, start]), model.state_values(view),
                      np.concatenate([lower_g, upper_g]), tail, np.concatenate([view.length, view.length]),
                      convention, horizon, tol, words)
    lower = {k: v[:S] for k, v in both.values.items()}
    upper = {k: v[S:] for k, v in both.values.items()}
    variance = {k: v[:S] for k, v in both.variance.items()}
    ideal = None
    if model.normalised:
        ideal = _ideal_propagation(model, rankings, convention, horizon, tol)
        for a in ("total", "rate", "mean_rate"):
            lower[a], upper[a] = _ratio(lower[a], ideal[a]), _ratio(upper[a], ideal[a])
            variance[a] = _ratio(variance[a], ideal[a] ** 2)
        ideal = ideal[model.aggregation][0]
    return Expectations(model, lower, upper, variance, both.reach[:S], both.stop[:S], both.never[:S],
                        ideal)


@dataclass
class _Run:
    values: dict[str, np.ndarray]
    variance: dict[str, np.ndarray]
    reach: np.ndarray
    stop: np.ndarray
    never: np.ndarray


def _propagate(model, start, states, gains, tail_gain, length, convention, horizon, tol,
               words=None) -> _Run:
    """Propagate the start distribution ``start`` (rows..., K) over the state values ``states``
    (K,) through ``gains`` (rows..., W), then a tail of gain ``tail_gain`` (rows..., 1) up to the
    horizon. Next states returned by a step are indices 0..K-1. ``words`` (rows..., W), if
    given, are the documents' lengths."""
    rows = gains.shape[:-1]
    W = gains.shape[-1]
    m = start.astype(float)
    K = m.shape[-1]
    defined = m.sum(-1) > 0
    h = np.zeros_like(m)
    q = np.zeros_like(m)  # E[G^2 1{alive in that state}], for the variances
    reach, stops = [], []
    g_stop, n_stop, rate_stop, cost, never, g_never = (np.zeros(rows) for _ in range(6))
    g2_stop, n2_stop, gn_stop, rate2_stop, g2_never = (np.zeros(rows) for _ in range(5))
    seen = np.zeros(rows + (1,))
    best = np.zeros(rows + (1,))
    if convention == "stop":  # an empty ranking: the user reads nothing
        m = np.where((length == 0)[..., None], 0.0, m)
    # ranks past which nothing is gained any more: users a model declares absorbed there never stop
    positive = gains > 0
    last_gain = np.where(positive.any(-1), W - np.argmax(positive[..., ::-1], axis=-1), 0)
    quiet_from = np.where(tail_gain[..., 0] == 0, last_gain, np.iinfo(np.int64).max)
    if convention == "stop":
        quiet_from[:] = np.iinfo(np.int64).max
    i = 0
    while True:
        i += 1
        alive = m.sum(-1)
        if i > horizon or alive.max(initial=0.0) <= tol:
            break
        g = gains[..., i - 1: i] if i <= W else tail_gain
        quiet = (i > quiet_from)[..., None]
        if quiet.any():
            absorbed = quiet & np.asarray(model.absorbed(states, i), dtype=bool)
            if absorbed.any():
                never += (m * absorbed).sum(-1)
                g_never += (h * absorbed).sum(-1)
                g2_never += (q * absorbed).sum(-1)
                m, h, q = (np.where(absorbed, 0.0, a) for a in (m, h, q))
                alive = m.sum(-1)
        reach.append(alive)
        seen = seen + g
        last = (i >= horizon) | ((convention == "stop") & (length == i))[..., None]
        m_next, h_next, q_next = np.zeros_like(m), np.zeros_like(h), np.zeros_like(q)
        stop_mass, stop_gain, stop_g2 = np.zeros(rows), np.zeros(rows), np.zeros(rows)
        w = words[..., i - 1: i] if words is not None and i <= W else np.nan
        for br in model.step(states, At(i, g, seen, best, w)):
            x = br.gain
            pm = m * br.prob
            ph = (h + m * x) * br.prob
            pq = (q + 2 * h * x + m * x * x) * br.prob
            cost += (pm * br.time).sum(-1)
            cont = np.logical_and(br.cont, ~last)
            if model.halflife is not None:  # the budget ends some continuing sessions here
                cont_share = np.where(cont, model.survival(br.time), 0.0)
            else:
                cont_share = np.where(cont, 1.0, 0.0)
            stop_mass += (pm * (1 - cont_share)).sum(-1)
            stop_gain += (ph * (1 - cont_share)).sum(-1)
            stop_g2 += (pq * (1 - cont_share)).sum(-1)
            pm, ph, pq = pm * cont_share, ph * cont_share, pq * cont_share
            if br.state is None:
                m_next += pm
                h_next += ph
                q_next += pq
            else:
                nxt = np.broadcast_to(np.asarray(br.state), m.shape)
                m_next += _scatter(pm, nxt, K)
                h_next += _scatter(ph, nxt, K)
                q_next += _scatter(pq, nxt, K)
        stops.append(stop_mass)
        g_stop += stop_gain
        n_stop += i * stop_mass
        rate_stop += stop_gain / i
        g2_stop += stop_g2
        n2_stop += i * i * stop_mass
        gn_stop += i * stop_gain
        rate2_stop += stop_g2 / (i * i)
        m, h, q = m_next, h_next, q_next
        best = np.maximum(best, g)
    total = g_stop + g_never
    depth = np.where(never > 0, np.inf, n_stop)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(depth > 0, total / depth, 0.0)
    values = {"total": total, "depth": depth, "cost": np.where(never > 0, np.inf, cost), "rate": rate,
              "mean_rate": rate_stop}
    values = {k: np.where(defined, v, np.nan) for k, v in values.items()}
    with np.errstate(invalid="ignore", divide="ignore"):
        var_n = n2_stop - n_stop ** 2
        cov = gn_stop - total * n_stop
        var_g = g2_stop + g2_never - total ** 2
        variance = {"total": var_g, "mean_rate": rate2_stop - rate_stop ** 2,
                    "depth": np.where(never > 0, np.nan, var_n),
                    "rate": np.where((never > 0) | (depth == 0), 0.0,
                                     (var_g - 2 * rate * cov + rate ** 2 * var_n) / depth ** 2)}
    variance = {k: np.where(defined, np.maximum(v, 0.0), np.nan) for k, v in variance.items()}
    empty = np.zeros(rows + (0,))
    return _Run(values, variance, np.stack(reach, -1) if reach else empty,
                np.stack(stops, -1) if stops else empty, never)


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
    return _propagate(model, model.initial(view), model.state_values(view), gains,
                      np.zeros(gains.shape[:-1] + (1,)), view.length, convention, horizon, tol).values
