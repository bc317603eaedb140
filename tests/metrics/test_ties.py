"""Measures over tie orders (metrics.ties, metrics.tie_forms) against brute force: every order of
every tie group written as a run of distinct scores, read and evaluated as any run is."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import rpdi.metrics.ties as ties
from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import compute, prepare
from rpdi.metrics.measures.registry import MEASURES
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.tie_forms import LINEAR, MONOTONE
from rpdi.metrics.trec import qrels_from_dict, run_from_dict

# measures with no expectation over tie orders, and why
EXCLUDED = {"RBO": "compares each run's documents with the first run's, whose ties move too",
            "RBO_EXT": "compares each run's documents with the first run's, whose ties move too"}
CLOSED = {"P", "AP", "GMAP", "RR", "DCG", "nDCG"}
VARIANTS = ["P(judged_only=True)@3", "AP(rel=2)", "AP@4", "RR(rel=2)@3", "RR(judged_only=True)", "DCG(b=2)@3",
            "nDCG(dcg='exp-log2')", "nDCG(dcg='exp-log2')@3", "nDCG(level_gains='1=3,2=9')", "nDCG@4",
            "Rprec(judged_only=True)", "SetP(relative=True)", "RBP(rel=2,p=0.5)@4", "SDCG(min_rel=1)@4"]


def registry_measures() -> list[str]:
    """Every declared measure at its defaults: without a cutoff and at 3 where it may take one."""
    names = []
    for name, spec in MEASURES.items():
        if name in EXCLUDED or spec.intents or spec.session:  # diversity measures: refused, see
            # test_diversity_measures_refused; session measures read sessions' turns (tests/metrics/test_sessions*)
            continue
        if spec.cutoff in ("none", "optional"):
            names.append(name)
        if spec.cutoff in ("required", "optional"):
            names.append(f"{name}@{0.5 if spec.cutoff_kind is float else 3}")
    return names + VARIANTS


def brute_force(tie_cases, qrels, run, names, judged_only=False):
    """measure -> per topic, its values under each of the topic's orders (one run per order of
    one topic, the others absent)."""
    runs, of_topic = [], []
    for t, scores in run.items():
        for order in tie_cases.every_order(scores):
            runs.append(run_from_dict(f"o{len(runs)}", {t: order}))
            of_topic.append(t)
    rankings, _ = prepare(qrels_from_dict(qrels), runs, judged_only=judged_only)
    of_topic = np.array(of_topic)
    out = {}
    for name, s in zip(names, compute(rankings, [parse_measure(n) for n in names])):
        out[name] = [s.value[of_topic == t, i] for i, t in enumerate(rankings.topics)]
    return out


def over_orders(f, columns) -> np.ndarray:
    """f (np.mean, np.min, np.max) of each topic's values over its orders."""
    return np.array([f(c) for c in columns])


def tied_rankings(qrels, run, judged_only=False):
    return prepare(qrels_from_dict(qrels), [run_from_dict("run", run)], judged_only=judged_only)[0]


# (seed, tie group sizes) of the random cases (tests/conftest.py TieCases.case)
CASES = ([(seed, (3, 2, 2)) for seed in range(8)] + [(seed, (4, 3)) for seed in (8, 9, 10)]
         + [(seed, (2, 2, 2, 2)) for seed in (11, 12)])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_expected_and_range_equal_brute_force(case, tie_cases):
    qrels, run = tie_cases.case(*CASES[case])
    names = registry_measures()
    every = brute_force(tie_cases, qrels, run, names)
    rankings = tied_rankings(qrels, run)
    for name in names:
        m = parse_measure(name)
        e = ties.expected(rankings, m)
        np.testing.assert_allclose(e.score.value[0], over_orders(np.mean, every[name]), rtol=1e-12, atol=1e-14,
                                   err_msg=f"{name} expected ({e.paths})")
        low, high, how = ties.span(rankings, m)
        np.testing.assert_allclose(low.value[0], over_orders(np.min, every[name]), rtol=1e-12, atol=1e-14,
                                   err_msg=f"{name} minimum ({set(how.ravel())})")
        np.testing.assert_allclose(high.value[0], over_orders(np.max, every[name]), rtol=1e-12, atol=1e-14,
                                   err_msg=f"{name} maximum ({set(how.ravel())})")
        assert not (e.stderr > 0).any()


def test_paths_are_as_declared(tie_cases):
    qrels, run = tie_cases.case(*CASES[0])
    rankings = tied_rankings(qrels, run)
    for name in registry_measures():
        m = parse_measure(name)
        e, how = ties.expected(rankings, m), ties.span(rankings, m)[2]
        tied = e.path != "unchanged"
        assert tied.any(), name
        want = ("closed_form" if m.spec.name in CLOSED and "judged_only" not in name and "level_gains" not in name
                else "linear" if m.spec.name in LINEAR and "judged_only" not in name else "enumeration")
        assert set(e.path[tied]) == {want}, name
        assert set(how[tied]) == {"sorted" if m.spec.name in MONOTONE else "enumeration"}, name


def test_excluded_measures_say_why(tie_cases):
    qrels, run = tie_cases.case(*CASES[0])
    rankings = prepare(qrels_from_dict(qrels), [run_from_dict("a", run), run_from_dict("b", run)])[0]
    for name, reason in EXCLUDED.items():
        assert reason
        with pytest.raises(InputError, match="ties are reordered too"):
            ties.expected(rankings, parse_measure(name))
    assert set(EXCLUDED) == {n for n, s in MEASURES.items() if s.between_runs}


def test_judged_only_rankings_equal_brute_force(tie_cases):
    qrels, run = tie_cases.case(*CASES[1])
    names = ["P@3", "AP", "RR", "nDCG@3", "ERR"]
    every = brute_force(tie_cases, qrels, run, names, judged_only=True)
    rankings = tied_rankings(qrels, run, judged_only=True)
    for name in names:
        e = ties.expected(rankings, parse_measure(name))
        np.testing.assert_allclose(e.score.value[0], over_orders(np.mean, every[name]), rtol=1e-12, atol=1e-14, err_msg=name)


def test_no_ties_give_todays_numbers_bitwise(tie_cases):
    qrels, run = tie_cases.case(*CASES[2])
    untied = {t: {d: float(i) for i, d in enumerate(scores)} for t, scores in run.items()}
    rankings = tied_rankings(qrels, untied)
    assert rankings.tie is None
    for name in registry_measures():
        m = parse_measure(name)
        today = compute(rankings, [m])[0]
        e = ties.expected(rankings, m)
        low, high, _ = ties.span(rankings, m)
        for x in (e.score.value, low.value, high.value):
            assert np.array_equal(x, today.value, equal_nan=True), name
        assert set(e.path.ravel()) == {"unchanged"} and e.paths == "unchanged"


def test_ties_past_the_cutoff_leave_todays_numbers():
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 2}}
    rankings = tied_rankings(qrels, {"q": {"a": 4.0, "b": 3.0, "c": 1.0, "d": 1.0}})
    for name in ["P@2", "nDCG@2", "ERR@2", "INST"]:
        m = parse_measure(name)
        e = ties.expected(rankings, m)
        assert (e.path == "unchanged").all() == name.endswith("@2"), name
        if name.endswith("@2"):
            assert np.array_equal(e.score.value, compute(rankings, [m])[0].value)


def test_tie_groups_follow_trec_evals_notion_of_equal():
    qrels = qrels_from_dict({"q": {"a": 1}})
    run = run_from_dict("s", {"q": {"a": 1.0, "b": 1.0 + 1e-12, "c": 0.5, "d": 0.5}})
    doubles = build_rankings(qrels, [run])
    singles = build_rankings(qrels, [run], float32_scores=True)  # pytrec_eval: 1 + 1e-12 is 1
    assert [x[0, 0].tolist() for x in ties.tie_groups(doubles)] == [[0, 1, 2, 2], [1, 2, 4, 4]]
    assert [x[0, 0].tolist() for x in ties.tie_groups(singles)] == [[0, 0, 2, 2], [2, 2, 4, 4]]


def test_mcsherry_najork_forms_equal_brute_force_on_long_groups(tie_cases):
    """Groups of 5 and 3 read past and across cutoffs: the closed forms against every order."""
    qrels, run = tie_cases.case(17, (5, 3))
    names = ["P@5", "P@20", "AP", "AP@6", "RR", "RR@4", "DCG", "DCG@7", "nDCG", "nDCG(dcg='exp-log2')@8"]
    every = brute_force(tie_cases, qrels, run, names)
    rankings = tied_rankings(qrels, run)
    for name in names:
        e = ties.expected(rankings, parse_measure(name))
        assert set(e.path.ravel()) == {"closed_form"}, name
        np.testing.assert_allclose(e.score.value[0], over_orders(np.mean, every[name]), rtol=1e-12, err_msg=name)


def test_sampling_estimates_within_its_error_and_repeats(monkeypatch, tie_cases):
    qrels, run = tie_cases.case(*CASES[0])
    names = ["ERR", "INST", "BPM@3"]
    every = brute_force(tie_cases, qrels, run, names)
    rankings = tied_rankings(qrels, run)
    monkeypatch.setattr(ties, "ENUMERATION_LIMIT", 2)
    for name in names:
        m = parse_measure(name)
        e = ties.expected(rankings, m, seed=3)
        assert set(e.path.ravel()) == {"sampling"}, name
        assert e.paths == "sampling"
        z = np.abs(e.score.value[0] - over_orders(np.mean, every[name])) / np.where(e.stderr[0] > 0, e.stderr[0], np.inf)
        assert (z < 4.5).all(), (name, z)
        assert np.array_equal(e.score.value, ties.expected(rankings, m, seed=3).score.value)
        low, high, how = ties.span(rankings, m, seed=3)
        if m.spec.name not in MONOTONE:
            assert set(how.ravel()) == {"sampling"}
        assert (low.value[0] >= over_orders(np.min, every[name]) - 1e-15).all()
        assert (high.value[0] <= over_orders(np.max, every[name]) + 1e-15).all()


def test_micro_parts_are_expectations(tie_cases):
    qrels, run = tie_cases.case(*CASES[3])
    every = brute_force(tie_cases, qrels, run, ["P@3"])
    rankings = tied_rankings(qrels, run)
    e = ties.expected(rankings, parse_measure("P@3"))
    np.testing.assert_allclose(e.score.num[0], 3 * over_orders(np.mean, every["P@3"]), rtol=1e-12)
    assert (e.score.den == 3).all()


def test_rankings_carry_the_groups_through_judged_only_and_truncation():
    from rpdi.metrics.rankings import judged_only, truncate

    qrels = qrels_from_dict({"q": {"a": 1, "c": 0}})
    r = build_rankings(qrels, [run_from_dict("s", {"q": {"a": 2.0, "b": 2.0, "c": 2.0, "d": 1.0}})])
    assert r.tie[0, 0].tolist() == [0, 0, 0, 3]
    assert judged_only(r).tie[0, 0].tolist() == [0, 0, -1, -1]
    assert truncate(r, 2).tie[0, 0].tolist() == [0, 0]
    assert replace(r, tie=None).tie is None


def test_batches_of_any_size_give_the_same_numbers(monkeypatch, tie_cases):
    qrels, run = tie_cases.case(*CASES[4])
    rankings = prepare(qrels_from_dict(qrels), [run_from_dict("a", run), run_from_dict("b", run)])[0]
    names = ["ERR", "RBP", "Unj@3"]
    whole = [ties.expected(rankings, parse_measure(n)).score.value for n in names]
    monkeypatch.setattr(ties, "BATCH_CELLS", 1)  # each ranking's reorderings alone
    for name, want in zip(names, whole):
        assert np.array_equal(ties.expected(rankings, parse_measure(name)).score.value, want), name


def test_diversity_measures_refused(tie_cases):
    """Diversity measures read subtopic grades that the reorderings here do not carry: one line."""
    qrels, run = tie_cases.case(*CASES[0])
    rankings = build_rankings(qrels_from_dict(qrels), [run_from_dict("r", run)])
    with pytest.raises(InputError, match="subtopics of diversity qrels"):
        ties.expected(rankings, parse_measure("alpha-nDCG@3"))
