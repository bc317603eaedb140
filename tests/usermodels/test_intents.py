"""usermodels/intents.py and mixture.py: X-IA's user (draws an intent, then reads as X's user) has
the exact expectation of X-IA's closed form, for every model; the rate of a mixture is the mean
over intents of each intent's rate, which is not the mixed population's E[G]/E[N]."""

from __future__ import annotations

import numpy as np
import pytest

from rpdi.metrics import InputError
from rpdi.metrics.diversity import DiversityQrels, diversity_rankings, intents_from_dict
from rpdi.metrics.evaluate import compute
from rpdi.metrics.names import parse_measure
from rpdi.metrics.trec import run_from_dict
from rpdi.usermodels import exact, model_for
from rpdi.usermodels.intents import IntentAware

MEASURES = ["RBP-IA(p=0.8)", "INST-IA", "ERR-IA@20", "P-IA@10", "AP-IA", "nDCG-IA@10", "RR-IA", "SDCG-IA@10",
            "DCG-IA@5", "BPM-IA@10", "NERR10-IA", "HIT-IA@5"]


@pytest.mark.parametrize("name", MEASURES)
def test_exact_equals_the_closed_form(diversity_collections, name):
    """X-IA's closed form (metrics, sum_i P(i|q) X_i from X's closed form on each intent) against
    the exact expectation of the user who draws an intent (usermodels)."""
    m = parse_measure(name)
    model = model_for(name)
    assert isinstance(model, IntentAware) and model.aggregation == model.inner.aggregation
    for rankings in diversity_collections:
        closed = compute(rankings, [m])[0].value
        value = exact(model, rankings).value
        assert np.array_equal(np.isnan(closed), np.isnan(value))
        np.testing.assert_allclose(value, closed, rtol=1e-9, atol=1e-12)


def _one_topic(grades: dict, ranking: list, intents=None):
    """Diversity rankings of one topic "1": ``grades`` {subtopic: {docno: grade}}, one run."""
    rows = [("1", s, d, float(g)) for s, per in grades.items() for d, g in per.items()]
    qrels = DiversityQrels(*[[r[k] for r in rows] for k in range(3)], np.array([r[3] for r in rows]))
    run = run_from_dict("r", {"1": {d: float(len(ranking) - i) for i, d in enumerate(ranking)}})
    return diversity_rankings(qrels, [run], intents=None if intents is None else intents_from_dict({"1": intents}))


def test_hand_computed_values():
    """RR-IA and AP-IA by hand: intent a finds d1 at rank 1, intent b d2 at rank 3; P(a) = 0.25."""
    r = _one_topic({"a": {"d1": 1}, "b": {"d2": 1, "d1": 0}}, ["d1", "x", "d2"], {"a": 0.25, "b": 0.75})
    assert exact(model_for("RR-IA"), r).value[0, 0] == pytest.approx(0.25 * 1 + 0.75 / 3)
    assert exact(model_for("P-IA@2"), r).value[0, 0] == pytest.approx(0.25 * 0.5 + 0.75 * 0)
    # uniform intents: over the subtopics with a relevant document
    r = _one_topic({"a": {"d1": 1}, "b": {"d2": 1}, "c": {"d3": 0}}, ["d2", "d1"])
    assert exact(model_for("RR-IA"), r).value[0, 0] == pytest.approx((1 / 2 + 1) / 2)


def test_an_intent_where_the_user_is_undefined_counts_zero():
    """AP is undefined for an intent with nothing relevant: its users gain nothing (0), as X-IA's
    closed form counts it; the other intent's AP is weighted by its own probability."""
    r = _one_topic({"a": {"d1": 1}, "b": {"d2": 0}}, ["x", "d1"], {"a": 0.6, "b": 0.4})
    value = exact(model_for("AP-IA"), r).value[0, 0]
    assert value == pytest.approx(0.6 * 0.5)
    assert value == pytest.approx(compute(r, [parse_measure("AP-IA")])[0].value[0, 0])


def test_rate_is_the_mean_of_the_intents_rates_not_the_populations():
    """INST's user stops on what it finds, so its intents read to different depths: X-IA's closed
    form is sum_i P(i) E_i[G]/E_i[N] (the model's value), and the mixed population's
    E[G]/E[N] = sum P(i) E_i[G] / sum P(i) E_i[N] is another number. RBP's user reads as deep
    whatever it finds: the two agree."""
    r = _one_topic({"a": {"d1": 2, "d2": 2}, "b": {"d9": 1}}, ["d1", "d2", "x", "y", "d9"], {"a": 0.5, "b": 0.5})
    for name, differ in (("INST-IA", True), ("RBP-IA(p=0.8)", False)):
        model = model_for(name)
        ex = exact(model, r)
        parts = ex.parts
        p = ex.shares[0, 0]
        rates = np.array([x.values["rate"][0, 0] for x in parts])
        depth = np.array([x.values["depth"][0, 0] for x in parts])
        total = np.array([x.values["total"][0, 0] for x in parts])
        closed = compute(r, [parse_measure(name)])[0].value[0, 0]
        assert ex.value[0, 0] == pytest.approx(closed) == pytest.approx((p * rates).sum())
        population = (p * total).sum() / (p * depth).sum()
        assert (abs(population - closed) > 1e-3) == differ


def test_plain_qrels_are_refused():
    from rpdi.metrics.evaluate import rankings_from_grades

    with pytest.raises(InputError, match="needs diversity qrels"):
        exact(model_for("RBP-IA"), rankings_from_grades("$-$"))


def test_a_model_of_ones_own_has_its_intent_aware_user(diversity_collections):
    """file.py:Class-IA(...): the user of one's own model, having drawn an intent, has the
    P(i|q)-weighted mean of its exact values per intent (X-IA's generic form, through metrics)."""
    name = "rpdi.usermodels.examples.two_strikes:TwoStrikes-IA(n=2)"
    model = model_for(name)
    assert isinstance(model, IntentAware) and model.measure.text == name
    rankings = diversity_collections[1]
    inner = model_for("rpdi.usermodels.examples.two_strikes:TwoStrikes(n=2)")
    per = rankings.intents.per_intent(rankings)
    S, T, I = len(rankings.runs), len(rankings.topics), rankings.intents.I
    x = np.nan_to_num(exact(inner, per).value.reshape(S, T, I))
    want = (x * rankings.intents.probabilities()[None]).sum(-1)
    np.testing.assert_allclose(exact(model, rankings).value, want, rtol=1e-12)
