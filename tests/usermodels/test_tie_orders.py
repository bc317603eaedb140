"""Users who read each tie group in a random order (usermodels.tie_orders) against brute force:
every order of every tie group written as a run of distinct scores, and the inner model's exact
expectation on each, averaged; the core's expectation over orders (metrics.ties: closed forms,
linear path, enumeration) must be the same number; simulated users through the verdict."""

from __future__ import annotations


import numpy as np
import pytest

import rpdi
from rpdi.metrics import ties
from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import prepare
from rpdi.metrics.trec import qrels_from_dict, run_from_dict
from rpdi.usermodels import exact, model_for, tie_orders
from rpdi.usermodels.tie_orders import TieOrders, population_rate

PLUGIN = "rpdi.usermodels.examples.two_strikes:TwoStrikes(n=2)@10"  # @10: a short horizon, fast
MODELS = ["RBP(p=0.8)", "ERR", "INST", "RR", "AP", PLUGIN]


def brute_force(tie_cases, model, qrels, run) -> dict:
    """Per topic, the inner model's exact values (value, E[G], E[N]) on each order of the topic's ties."""
    out = {}
    for t, scores in run.items():
        runs = [run_from_dict(f"o{i}", {t: order}) for i, order in enumerate(tie_cases.every_order(scores))]
        rankings = prepare(qrels_from_dict(qrels), runs)[0]
        i = [str(x) for x in rankings.topics].index(t)
        ex = exact(model, rankings)
        out[t] = (ex.value[:, i], ex.values["total"][:, i], ex.values["depth"][:, i])
    return out


def tied(qrels, run):
    return prepare(qrels_from_dict(qrels), [run_from_dict("run", run)])[0]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("seed", range(4))
def test_exact_over_orders_equals_brute_force_and_the_core(name, seed, tie_cases):
    qrels, run = tie_cases.case(seed, (3, 2))
    inner = model_for(name)
    rankings = tied(qrels, run)
    every = brute_force(tie_cases, inner, qrels, run)
    want = np.array([np.mean(every[str(t)][0]) for t in rankings.topics])
    got = exact(TieOrders(inner), rankings).value[0]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=name)
    core = ties.expected(rankings, inner.measure)  # closed form, linear path or enumeration
    np.testing.assert_allclose(core.score.value[0], want, rtol=1e-9, atol=1e-12, err_msg=f"{name} ({core.paths})")


def test_the_paths_checked(tie_cases):
    """The closed forms (RR, AP), the linear path (RBP), enumeration (ERR, INST, the plugin) are all met."""
    rankings = tied(*tie_cases.case(0, (3, 2)))
    paths = {name: ties.expected(rankings, model_for(name).measure).paths for name in MODELS}
    assert paths["RR"] == paths["AP"] == "closed_form" and paths["RBP(p=0.8)"] == "linear"
    assert paths["ERR"] == paths["INST"] == paths[PLUGIN] == "enumeration"


@pytest.mark.parametrize("seed", range(3))
def test_population_rate_differs_for_inst_and_not_for_rbp(seed, tie_cases):
    qrels, run = tie_cases.case(seed, (3, 2))
    rankings = tied(qrels, run)
    for name, differs in (("INST", True), ("RBP(p=0.8)", False)):
        inner = model_for(name)
        ex = exact(TieOrders(inner), rankings)
        every = brute_force(tie_cases, inner, qrels, run)
        population = np.array([np.mean(every[str(t)][1]) / np.mean(every[str(t)][2]) for t in rankings.topics])
        mean_of_rates = np.array([np.mean(every[str(t)][0]) for t in rankings.topics])
        np.testing.assert_allclose(population_rate(ex)[0], population, rtol=1e-9)
        np.testing.assert_allclose(ex.value[0], mean_of_rates, rtol=1e-9)
        gap = np.abs(population - mean_of_rates).max()
        assert (gap > 1e-6) if differs else (gap < 1e-10), (name, gap)


def test_sampled_orders_are_the_cores_sample():
    """A group with more distinct orders than the enumeration limit: the variants are the core's
    seeded sample, so the exact value is the core's sampled mean, and is not the other seed's."""
    grades = [2, 2, 2, 1, 1, 1, 0, 0, 0]  # and two unjudged: 11! / (3! 3! 3! 2!) = 92400 distinct orders
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades)}}
    run = {"q": {f"d{i}": 1.0 for i in range(len(grades) + 2)} | {"top": 2.0}}
    rankings = tied(qrels, run)
    m = model_for("ERR@12")  # neither closed form nor linear: enumeration, or here sampling
    assert ties._n_orders(ties._labels(rankings)[0, 0], [np.arange(1, 12)]) > ties.ENUMERATION_LIMIT
    core = ties.expected(rankings, m.measure, seed=3)
    assert core.paths == "sampling"
    value = exact(TieOrders(m, seed=3), rankings).value[0, 0]
    assert value == pytest.approx(core.score.value[0, 0], rel=1e-12)
    assert value != pytest.approx(ties.expected(rankings, m.measure, seed=4).score.value[0, 0], rel=1e-12)


def test_simulated_users_agree_with_the_exact_value(tie_cases):
    qrels, run = tie_cases.case(5, (3, 2))
    records, verdict = rpdi.simulate(qrels, {"r": run}, ["RBP(p=0.8)", "ERR", "INST", PLUGIN], users=4000,
                                     seed=7, with_verdict=True, ties="expected")
    assert verdict.status == 0, verdict.counts
    inst = next(r for r in records if r["measure"] == "INST")
    assert inst["population_rate"] is not None and inst["population_rate"] != pytest.approx(inst["exact"])
    err = next(r for r in records if r["measure"] == "ERR")
    assert err["population_rate"] is None  # mean_rate: one number


def test_without_ties_simulate_is_unchanged():
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    runs = {"r": {"q1": {"a": 3.0, "b": 2.0, "x": 1.0}, "q2": {"c": 2.0, "y": 1.0}}}
    plain = rpdi.simulate(qrels, runs, ["INST", "ERR"], users=500, seed=1)
    over = rpdi.simulate(qrels, runs, ["INST", "ERR"], users=500, seed=1, ties="expected")
    for a, b in zip(plain, over):
        assert {k: v for k, v in b.items() if k != "population_rate"} == a


def test_too_many_orders_and_bad_values_refused(monkeypatch):
    with pytest.raises(InputError, match="ties \\(simulate\\): expected one of trec_eval, expected, not 'range'"):
        rpdi.simulate({"q": {"a": 1}}, {"r": {"q": {"a": 1.0}}}, ["RR"], users=0, ties="range")
    monkeypatch.setattr(tie_orders, "ORDER_CELLS", 8 * 2 * 8 - 1)  # 8 orders x 2 topics x 8 ranks
    qrels = {f"q{i}": {"a": 1} for i in range(2)}
    run = {f"q{i}": {f"d{j}": 1.0 for j in range(7)} | {"a": 1.0} for i in range(2)}
    rankings = tied(qrels, run)
    with pytest.raises(InputError, match="too many to simulate; rpdi eval --ties expected"):
        TieOrders(model_for("INST")).variants(rankings)
