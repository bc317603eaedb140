"""The forward-backward passes against brute force: every examination path of a small log
enumerated one by one (start state, then at each rank the click's probability and the branch
the automaton takes), for every click model that runs on the passes."""

import itertools

import numpy as np
import pytest

from rpdi.metrics.clicklogs import ClickLog
from rpdi.usermodels.base import At
from rpdi.usermodels.clickfit import fit
from rpdi.usermodels.clickmodels import click_model
from rpdi.usermodels.clickpasses import _start, forward, marginal

N = 4  # ranks
NOISE = 0.05  # large, so that the stopped users' share of a click weighs in every figure

# model name, parameters set, gain of a click ("click": 1, "scaled": s, "satisfaction": per document)
MODELS = [
    ("CM", {}), ("SDBN", {}), ("DBN", {"gamma": 0.7}), ("DCM", {"lambda_1": 0.3, "lambda_2": 0.8, "lambda_3": 0.5}),
    ("ERR", {"s": 0.4}), ("RBP", {"p": 0.6}), ("RBP2", {"p1": 0.3, "p2": 0.8}), ("INST", {"T": 1.5}),
    ("INSQ", {"T": 2.5}), ("RR2", {}), ("P@3", {}), ("SDCG@3", {}), ("BetaRBP", {"a": 2.0, "b": 3.0}),
    ("CCM", {"tau1": 0.8, "tau2": 0.6, "tau3": 0.2}),
]


def _paths(user, clicks, alpha, gain, noise):
    """Every path of one session with these clicks: (probability, per rank (examined?, branch
    index or -1 once stopped))."""
    start, states = _start(user, len(clicks))
    out = []

    def walk(r, k, alive, p, seen, best, hist):
        if p == 0.0:
            return
        if r == len(clicks):
            out.append((p, hist))
            return
        c = bool(clicks[r])
        if not alive:  # a stopped user clicks with probability noise
            walk(r + 1, k, False, p * (noise if c else 1 - noise), seen, best, hist + [(False, -1)])
            return
        p *= alpha[r] if c else 1 - alpha[r]
        g = c * gain[r]
        at = At(r + 1, np.array(g), np.array(seen + g), np.array(best))
        for i, br in enumerate(user.step(np.array(states[k]), at)):
            cont = bool(br.cont) and user.before_cutoff(r + 1)
            nk = k if br.state is None else int(br.state)
            walk(r + 1, nk, cont, p * float(br.prob), seen + g, max(best, g), hist + [(True, i)])

    for k in range(len(start)):
        walk(0, k, True, float(start[k]), 0.0, 0.0, [])
    return out


def _setup(name, params, rng):
    cm = click_model(name, N)
    cm.set(params)
    S = 5
    alpha = rng.uniform(0.1, 0.9, (S, N))
    gain = {"click": np.ones((S, N)), "scaled": np.full((S, N), params.get("s", 1.0)),
            "satisfaction": rng.uniform(0.1, 0.9, (S, N)), "attractiveness": alpha}[cm.gain]
    clicks = rng.random((S, N)) < 0.4
    clicks[0] = [True, False, True, True]  # clicks after a cascade's stop: only the noise explains them
    return cm, clicks, alpha, gain


@pytest.mark.parametrize("name, params", MODELS, ids=[m[0] for m in MODELS])
def test_passes_equal_enumeration_of_every_path(name, params):
    rng = np.random.default_rng(np.random.SeedSequence([27, len(name), sum(map(ord, name))]))
    cm, clicks, alpha, gain = _setup(name, params, rng)
    res = forward(cm.user, clicks, alpha, gain, NOISE, backward=True)
    marg = marginal(cm.user, alpha, gain, cm.gain, NOISE)
    vectors = [np.array(v, bool) for v in itertools.product([0, 1], repeat=N)]
    for s in range(len(clicks)):
        prob = {tuple(v): sum(p for p, _ in _paths(cm.user, v, alpha[s], gain[s], NOISE)) for v in vectors}
        assert sum(prob.values()) == pytest.approx(1.0, abs=1e-12)
        assert res.ll[s] == pytest.approx(np.log(prob[tuple(clicks[s])]), abs=1e-10)
        for r in range(N):
            prefix = [v for v in prob if v[:r] == tuple(clicks[s, :r])]
            q = sum(prob[v] for v in prefix if v[r]) / sum(prob[v] for v in prefix)
            assert res.q[s, r] == pytest.approx(q, abs=1e-12)
            assert marg[s, r] == pytest.approx(sum(prob[v] for v in prob if v[r]), abs=1e-12)
        paths = _paths(cm.user, clicks[s], alpha[s], gain[s], NOISE)
        total = sum(p for p, _ in paths)
        for r in range(N):
            exam = sum(p for p, h in paths if h[r][0]) / total
            assert res.exam[s, r] == pytest.approx(exam, abs=1e-10), ("exam", s, r)
            for i in range(res.branch.shape[2]):
                taken = sum(p for p, h in paths if h[r][1] == i) / total
                assert res.branch[s, r, i] == pytest.approx(taken, abs=1e-10), ("branch", i, s, r)


def _log(rng, S, n_docs=3):
    docs = np.array([rng.permutation(n_docs)[:N] if n_docs >= N else rng.integers(0, n_docs, N) for _ in range(S)])
    clicks = rng.random((S, N)) < 0.35
    return ClickLog(np.zeros(S, int), docs, clicks, np.array(["q"], object),
                    np.array([f"d{i}" for i in range(n_docs)], object))


@pytest.mark.parametrize("name", ["SDBN", "DBN", "DCM", "RBP", "CCM"])
def test_one_em_step_equals_the_enumerated_expected_counts(name):
    """One EM update from attractiveness (and satisfaction) 0.5: each document's expected number
    of attractive impressions over its impressions (satisfaction: expected satisfied clicks
    over expected examined clicks; CCM, whose satisfaction is the attractiveness: both summed),
    the expectations summed over the enumerated paths."""
    rng = np.random.default_rng(np.random.SeedSequence([27, 2, len(name)]))
    log = _log(rng, 12, n_docs=6)
    m = fit(name, log, noise=NOISE, prior=(0, 0), max_iter=1, accelerate=False, stderr=False)
    cm = click_model(name, N)
    cm.set(m.params)
    half = np.full(N, 0.5)
    gain = half if cm.gain in ("satisfaction", "attractiveness") else np.full(N, m.params.get("s", 1.0))
    satisfying = (0, 1) if name == "CCM" else (0,)  # the branches that are a satisfaction
    a_num, s_num, s_den = np.zeros(6), np.zeros(6), np.zeros(6)
    for s in range(len(log)):
        paths = _paths(cm.user, log.clicks[s], half, gain, NOISE)
        total = sum(p for p, _ in paths)
        for r in range(N):
            d, c = log.docs[s, r], log.clicks[s, r]
            a_num[d] += sum(p * (c if h[r][0] else 0.5) for p, h in paths) / total
            s_num[d] += c * sum(p for p, h in paths if h[r][1] in satisfying) / total
            s_den[d] += c * sum(p for p, h in paths if h[r][0]) / total
    count = np.bincount(log.docs.ravel(), minlength=6)
    order = m.keys.get_indexer([f"q\td{i}" for i in range(6)])
    if name == "CCM":
        a_num, count = a_num + s_num, count + s_den
    np.testing.assert_allclose(m.alpha[order], a_num / count, atol=1e-10, rtol=0)
    if m.sigma is not None:
        np.testing.assert_allclose(m.sigma[order], s_num / s_den, atol=1e-10, rtol=0)
