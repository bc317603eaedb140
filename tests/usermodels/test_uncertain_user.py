"""The grade-averaged user (usermodels.uncertain_user) against brute force over every judgment
world: the ordinary exact evaluator run in each world on ordinary rankings, weighted by the
world's probability; the closed forms' expectation by metrics.uncertain_scores' enumeration; and
rpdi simulate over worlds, whose verdict agrees."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from rpdi.metrics.errors import InputError
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.evaluate import load_runs
from rpdi.metrics.trec import qrels_from_dict
from rpdi.metrics.uncertain import uncertain_from_dict
from rpdi.metrics.uncertain_scores import join, spread
from rpdi.usermodels import exact, model_for
from rpdi.usermodels.examples.two_strikes import TwoStrikes
from rpdi.usermodels.uncertain_user import NotCarried, over_worlds

# every model whose step reads only the current gain, a model of one's own among them
CARRIED = ["RR", "ERR@4", "RBP(p=0.7)", "RBP2", "P@3", "SDCG@4", "DCG@3", "RR2", "CautiousRR",
           "NPV", "U", "SET@5", "TBG"]
# the closed forms whose expectation over worlds the user's E[G] or E[G/N] is (the rate ones: E[N]
# is the same in every world)
CLOSED = ["RR", "ERR@4", "DCG@3", "RR2", "RBP(p=0.7)", "P@3", "SDCG@4"]


def collection(seed: int):
    """Random small uncertain qrels (2 topics, 5 documents each, some uncertain, some possibly
    unjudged in a world) and two runs over them (one retrieving an unjudged document)."""
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {"a": {}, "b": {}}
    for t in ("q1", "q2"):
        docs = [f"{t}d{i}" for i in range(5)]
        qrels[t] = {}
        for i, d in enumerate(docs):
            if i < 3:  # uncertain: 2 or 3 grades among -1..3
                grades = rng.choice([-1, 0, 1, 2, 3], size=rng.integers(2, 4), replace=False, p=[.1, .3, .2, .2, .2])
                p = rng.dirichlet(np.ones(len(grades)))
                qrels[t][d] = {float(g): float(x) for g, x in zip(grades, p)}
            else:
                qrels[t][d] = int(rng.integers(0, 4))
        for run in runs:
            order = rng.permutation(docs + [f"{t}x"])[:5]
            runs[run][t] = {d: float(5 - r) for r, d in enumerate(order)}
    return qrels, runs


def worlds(qrels):
    """Every world of ``qrels``: (plain qrels dict, probability)."""
    cells = [(t, d, list(v.items()) if isinstance(v, dict) else [(float(v), 1.0)])
             for t, docs in qrels.items() for d, v in docs.items()]
    for choice in itertools.product(*(c[2] for c in cells)):
        world = {}
        for (t, d, _), (g, _) in zip(cells, choice):
            world.setdefault(t, {})[d] = g
        yield world, float(np.prod([p for _, p in choice]))


def brute_force(model, qrels, runs, scale):
    """(S, T) E over worlds of the model's total, mean_rate and depth: each world of each topic
    (the other topics' worlds do not change its value) is a topic of one ordinary collection, its
    exact values weighted by the world's probability (the grade scale held at the qrels', as
    metrics.uncertain_scores holds it)."""
    big, big_runs, of = {}, {r: {} for r in runs}, {}
    for t, docs in qrels.items():
        for i, (world, p) in enumerate(worlds({t: docs})):
            big[f"{t}#{i}"], of[f"{t}#{i}"] = world[t], (sorted(qrels).index(t), p)
            for r in runs:
                big_runs[r][f"{t}#{i}"] = runs[r][t]
    rankings = build_rankings(qrels_from_dict(big), load_runs(big_runs))
    values = exact(model, replace(rankings, max_grade=scale), "unknown").values
    out = {k: np.zeros((len(runs), len(qrels))) for k in ("total", "mean_rate", "depth")}
    for column, topic in enumerate(rankings.topics):
        t, p = of[topic]
        for k in out:
            out[k][:, t] += p * values[k][:, column]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("name", CARRIED)
def test_the_averaged_user_is_every_worlds_user_on_average(name, seed):
    qrels, runs = collection(seed)
    j = join(uncertain_from_dict(qrels), runs)
    model = model_for(name)
    got = over_worlds(model, j)
    want = brute_force(model, qrels, runs, j.scale)
    for k in ("total", "mean_rate", "depth"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-12, err_msg=k)
    # rate: E[G]/E[N] over the users of every world, not the mean of each world's rate
    np.testing.assert_allclose(got["rate"], want["total"] / want["depth"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", CLOSED)
def test_the_averaged_user_equals_the_closed_forms_expectation_over_every_world(name, seed):
    qrels, runs = collection(seed)
    j = join(uncertain_from_dict(qrels), runs)
    s = spread(j, name, exact_worlds=10**6)
    assert set(s.path) == {"enumeration"}
    model = model_for(name)
    np.testing.assert_allclose(over_worlds(model, j)[model.aggregation], s.topic.mean, rtol=1e-10, atol=1e-12)


def test_rate_over_users_is_not_the_expected_rate_where_depth_depends_on_grades():
    # a model of one's own: the user stops after two non-relevant documents in a row, so how deep
    # it reads depends on a's grade: world a=3 reads a, c, the tail's first (G 1, N 3), world a=0
    # reads a, c (G 0, N 2): each world's rate averages to 1/6, the users' E[G]/E[N] is 0.5/2.5
    qrels = {"q": {"a": {0.0: 0.5, 3.0: 0.5}, "c": 0}}
    runs = {"r": {"q": {"a": 2.0, "c": 1.0}}}
    model = TwoStrikes(n=2)
    j = join(uncertain_from_dict(qrels), runs)
    per_world = [(exact(model, replace(build_rankings(qrels_from_dict(w), load_runs(runs)), max_grade=3.0)).values, p)
                 for w, p in worlds(qrels)]
    assert sum(p * v["rate"][0, 0] for v, p in per_world) == pytest.approx(1 / 6, rel=1e-12)
    got = over_worlds(model, j)
    assert got["total"][0, 0] == pytest.approx(0.5, rel=1e-12) and got["depth"][0, 0] == pytest.approx(2.5, rel=1e-12)
    assert got["rate"][0, 0] == pytest.approx(0.2, rel=1e-12)


@pytest.mark.parametrize("name,why", [("AP", "start depends on the grades"), ("INST", "prefix"), ("HIT@3", "prefix"),
                                      ("nDCG@3", "normalised"), ("BPM@5", "prefix")])
def test_users_that_read_more_than_the_current_gain_are_refused_by_name(name, why):
    qrels, runs = collection(1)
    j = join(uncertain_from_dict(qrels), runs)
    with pytest.raises(InputError, match=why) as caught:
        over_worlds(model_for(name), j)
    assert caught.value.args[0].count("\n") == 0
    assert (why == "prefix") == isinstance(caught.value, NotCarried)


def test_simulated_users_each_in_a_world_of_their_own_agree_with_the_exact_value(tmp_path, write, run_cli):
    qrels, runs = collection(4)
    lines = "".join(f"{t} 0 {d} " + (",".join(f"{g:g}:{p!r}" for g, p in v.items()) if isinstance(v, dict) else str(v))
                    + "\n" for t, docs in qrels.items() for d, v in docs.items())
    q = write(tmp_path / "u.txt", lines)
    paths = [write(tmp_path / f"{r}.run", "".join(f"{t} Q0 {d} {i} {s} {r}\n" for t, docs in run.items()
                                                   for i, (d, s) in enumerate(docs.items(), 1)))
             for r, run in runs.items()]
    argv = ["simulate", q, *paths, "-m", "RR", "-m", "ERR@4", "-m", "RBP(p=0.7)", "-m", "DCG@3", "--users", "3000",
            "--seed", "5", "--format", "json"]
    status, out, err = run_cli(argv)
    assert status == 0, err
    assert "verdict: AGREE" in err and "0 closed-vs-exact" not in err, err
    status, out, err = run_cli(argv[:4] + ["-m", "AP", "--users", "100"])
    assert status == 2 and err.count("\n") == 1 and "'AP'" in err and "rpdi eval" in err, err
