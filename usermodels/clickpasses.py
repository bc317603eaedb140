"""The likelihood machinery of the click models (:mod:`usermodels.clickmodels`, fitted by
:mod:`usermodels.clickfit`, evaluated by :mod:`usermodels.clickeval`): a browsing
model's automaton run over a click log as a hidden Markov model over (rank, automaton state).

- :func:`forward`: the scaled forward pass with the clicks observed, giving P(C_r = 1 | C_<r)
  and each session's log-likelihood; with ``backward`` also the posterior examination and the
  posterior of every branch of the automaton at every rank (forward-backward: the
  satisfaction of SDBN, DBN and CCM is their first branch(es)), which EM re-estimates from.
- :func:`marginal`: P(C_r = 1) with the clicks unobserved (for perplexity).
- :func:`sample_automaton`: click logs drawn from the model.
- :func:`independent_q` and :func:`independent_marginal`: the same for the models whose
  examination does not depend on the clicks' path (PBM, UBM, the CTR baselines).

A user who has stopped clicks with probability ``noise``. Reference: Chuklin, Markov & de Rijke,
"Click Models for Web Search" (2015), Chapters 3-4.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpdi.metrics.rankings import Rankings
from rpdi.metrics.errors import InputError
from rpdi.metrics.view import View
from rpdi.usermodels.base import At, BrowsingModel


def _start(user: BrowsingModel, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The user's start distribution (K,) and state values, on a one-ranking view of the depth."""
    rankings = Rankings.of_grades(np.zeros((1, 1, depth)), np.zeros((1, 1)), [0], 1.0, runs=("log",))
    view = View(rankings, user.k)
    start = np.asarray(user.initial(view), float)[0, 0]
    if start.sum() <= 0:
        raise InputError(f"model {user!r}: has no start state on a click log")
    return start, np.asarray(user.state_values(view))


def _branches(user, states, at, shape):
    """(prob, cont, next-state or None) of every branch, broadcast to ``shape``."""
    out = []
    for br in user.step(states, at):
        prob = np.broadcast_to(np.asarray(br.prob, float), shape)
        cont = np.broadcast_to(np.asarray(br.cont, bool), shape)
        if not user.before_cutoff(at.rank):
            cont = np.zeros(shape, bool)
        nxt = None if br.state is None else np.broadcast_to(np.asarray(br.state, np.int64), shape)
        out.append((prob, cont, nxt))
    return out


def _advance(branches, m):
    """Mass continuing in each state, and mass stopping, after one step from ``m`` (..., K): the
    moving mass scattered onto each branch's next state by one bincount (O(K), not O(K^2))."""
    shape, K = m.shape, m.shape[-1]
    rows = np.arange(m.size // K).reshape(shape[:-1] + (1,)) * K
    nxt, stopped = np.zeros(m.size), np.zeros(shape[:-1])
    for prob, cont, state in branches:
        pm = np.where(m > 0, m * prob, 0.0)  # a state without mass adds nothing, whatever its branches
        stopped += np.where(cont, 0.0, pm).sum(-1)
        moving = np.where(cont, pm, 0.0).ravel()
        nxt += moving if state is None else np.bincount((rows + state).ravel(), moving, m.size)
    return nxt.reshape(shape), stopped


@dataclass
class Pass:
    """What a forward(-backward) pass gives, per session and rank."""

    q: np.ndarray  # P(C_r = 1 | C_<r)
    ll: np.ndarray  # per-session log-likelihood
    exam: np.ndarray | None = None  # P(E_r = 1 | C)
    branch: np.ndarray | None = None  # (S, N, B): P(branch i taken at r | C)


def forward(user, clicks, alpha, gain, noise, backward=False) -> Pass:
    """Scaled forward(-backward) pass over (rank, state) with the clicks observed."""
    S, N = clicks.shape
    start, states = _start(user, N)
    K = len(start)
    m = np.broadcast_to(start, (S, K)).copy()
    stop = np.zeros(S)
    seen, best = np.zeros((S, 1)), np.zeros((S, 1))
    q, ll = np.empty((S, N)), np.zeros(S)
    saved = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for r in range(N):
            c, a = clicks[:, r], alpha[:, r]
            alive = m.sum(1)
            q[:, r] = alive * a + stop * noise
            ea, es = np.where(c, a, 1 - a), np.where(c, noise, 1 - noise)
            z = alive * ea + stop * es
            ll += np.log(z)
            g = (c * gain[:, r])[:, None]
            seen = seen + g
            br = _branches(user, states[None, :], At(r + 1, g, seen, best), (S, K))
            if backward:
                saved.append((m, ea, es, z, br))
            nxt, stopped = _advance(br, m * (ea / z)[:, None])
            stop = stop * es / z + stopped
            m = nxt
            best = np.maximum(best, g)
        if not backward:
            return Pass(q, ll)
        b, bs = np.ones((S, K)), np.ones(S)
        exam, post = np.empty((S, N)), np.empty((S, N, len(saved[0][4])))
        for r in range(N - 1, -1, -1):
            m, ea, es, z, br = saved[r]
            acc = np.zeros((S, K))
            for i, (prob, cont, state) in enumerate(br):
                ahead = b if state is None else np.take_along_axis(b, state, axis=1)
                v = np.where(prob > 0, prob * np.where(cont, ahead, bs[:, None]), 0.0)
                acc += v
                post[:, r, i] = (m * v).sum(1) * ea / z
            b, bs = acc * (ea / z)[:, None], bs * es / z
            exam[:, r] = (m * b).sum(1)
    return Pass(q, ll, exam, post)


PER_DOCUMENT = ("satisfaction", "attractiveness")  # gain modes whose click's gain differs per document


def marginal(user, alpha, gain, mode, noise) -> np.ndarray:
    """P(C_r = 1) with clicks unobserved: the forward pass over (clicks so far, state), the
    count giving the gain seen so far (no count when the gain differs per document: the models
    with such gains, SDBN, DBN and CCM, look at the click's own gain only)."""
    S, N = alpha.shape
    start, states = _start(user, N)
    K = len(start)
    C = 1 if mode in PER_DOCUMENT else N + 1
    m = np.zeros((S, C, K))
    m[:, 0, :] = start
    stop = np.zeros(S)
    counts = np.arange(C, dtype=float)[None, :, None]
    q = np.empty((S, N))
    with np.errstate(divide="ignore", invalid="ignore"):  # the model at count states not reached
        for r in range(N):
            a = alpha[:, r]
            q[:, r] = m.sum((1, 2)) * a + stop * noise
            nxt = np.zeros_like(m)
            for x, w in ((0, 1 - a), (1, a)):
                gx = (x * gain[:, r])[:, None, None]
                if mode in PER_DOCUMENT:
                    seen, best = gx, np.zeros((S, 1, 1))
                else:
                    s = gain[:, r][:, None, None]
                    seen, best = s * (counts + x), s * (counts > 0)
                br = _branches(user, states[None, None, :], At(r + 1, gx, seen, best), (S, C, K))
                moved, stopped = _advance(br, m * w[:, None, None])
                stop = stop + stopped.sum(1)
                if x and C > 1:
                    nxt[:, 1:] += moved[:, :-1]
                else:
                    nxt += moved
            m = nxt
    return q


def sample_automaton(user, alpha, gain, noise, rng) -> np.ndarray:
    S, N = alpha.shape
    start, states = _start(user, N)
    state = np.minimum(np.searchsorted(np.cumsum(start), rng.random(S) * start.sum(), side="right"), len(start) - 1)
    alive = np.ones(S, bool)
    seen, best = np.zeros(S), np.zeros(S)
    clicks = np.zeros((S, N), bool)
    for r in range(N):
        u = rng.random(S)
        c = np.where(alive, u < alpha[:, r], u < noise)
        clicks[:, r] = c
        g = c * gain[:, r]
        seen = seen + g
        u, low = rng.random(S), np.zeros(S)
        cont, nxt = np.zeros(S, bool), state.copy()
        for prob, bcont, bstate in _branches(user, states[state], At(r + 1, g, seen, best), (S,)):
            hit = (u >= low) & (u < low + prob)
            low = low + prob
            cont |= hit & bcont
            if bstate is not None:
                nxt = np.where(hit, bstate, nxt)
        alive &= cont
        state = nxt
        best = np.maximum(best, g)
    return clicks


# -- PBM, UBM and the CTR baselines --------------------------------------------------------------

def exam_index(kind: str, clicks: np.ndarray, r: int) -> np.ndarray:
    """Index of the examination parameter at rank r (0-based) given the clicks above it."""
    S, N = clicks.shape
    if kind == "rank":
        return np.full(S, r)
    above = clicks[:, :r]
    prev = np.where(above.any(1), r - np.argmax(above[:, ::-1], axis=1), 0) if r else np.zeros(S, int)
    return r * (N + 1) + prev


def independent_q(exam, kind, clicks, alpha, noise, only=None) -> np.ndarray:
    """P(C_r = 1 | C_<r) = eps alpha + (1 - eps) noise, for all ranks or rank ``only``."""
    ranks = range(clicks.shape[1]) if only is None else [only]
    cols = []
    for r in ranks:
        eps = 1.0 if kind == "none" else exam[exam_index(kind, clicks, r)]
        cols.append(eps * alpha[:, r] + (1 - eps) * noise)
    return cols[0] if only is not None else np.stack(cols, 1)


def independent_marginal(exam, kind, alpha, noise) -> np.ndarray:
    if kind != "ubm":
        return independent_q(exam, kind, np.zeros(alpha.shape, bool), alpha, noise)
    S, N = alpha.shape
    last = np.zeros((S, N + 1))  # P(the last click above rank r is at rank l), l = 0: none
    last[:, 0] = 1.0
    q = np.empty((S, N))
    for r in range(N):
        eps = exam[r * (N + 1) + np.arange(r + 1)]  # previous click l = 0..r
        p = eps[None, :] * alpha[:, r:r + 1] + (1 - eps[None, :]) * noise
        q[:, r] = (last[:, :r + 1] * p).sum(1)
        last[:, :r + 1] *= 1 - p
        last[:, r + 1] = q[:, r]
    return q
