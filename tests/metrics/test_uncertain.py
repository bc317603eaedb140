"""Uncertain grades (metrics/uncertain.py, metrics/uncertain_scores.py) against brute force over
every judgment world: each world's qrels are evaluated by today's code path (metrics.evaluate's
prepare and compute), independently of the world builder under test."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import _aggregate, _records, compute, evaluate, expand, prepare
from rpdi.metrics.measures.registry import MEASURES
from rpdi.metrics.trec import qrels_from_dict, read_qrels
from rpdi.metrics.uncertain import (TOLERANCE, certain, combine_assessors, read_uncertain_qrels,
                                    uncertain_from_dict)
from rpdi.metrics.uncertain_scores import LINEAR, compare, join, records, spread, spreads


def every_measure() -> list[str]:
    """A name for each closed form the metrics layer registers (a cutoff of 3 where one is
    required, recall level 0.5 for IPrec), and variants whose gains differ."""
    names = []
    for spec in MEASURES.values():
        if spec.method != "closed_form":
            continue  # a browsing model of one's own, registered by a test elsewhere
        if spec.intents:
            continue  # diversity measures: refused (test_diversity_measures_refused)
        if spec.session:
            continue  # session measures read sessions' turns (tests/metrics/test_sessions*)
        cut = "" if spec.cutoff != "required" else "@0.5" if spec.cutoff_kind is float else "@3"
        names.append(spec.name + cut)
    return names + ["nDCG@3", "DCG(dcg='exp-log2')@4", "RBP(p=0.5,rel=2)", "SDCG(max_rel=2)@4", "AP@3",
                    "ndcg_cut_3", "P_3", "map"]


def small_case(random_collection):
    """A random collection (negative grades, unjudged documents, ties, R = 0 topics) whose
    topics t00, t01 and t03 have uncertain documents, one of them with a fractional grade:
    12 x 4 x 6 = 288 worlds in all."""
    qrels, runs = random_collection(np.random.default_rng(7), 3, 5)
    pattern = {"t00": [{0: 0.3, 2: 0.7}, {1: 0.2, 2: 0.5, 3: 0.3}, {-1: 0.4, 1: 0.6}],
               "t01": [{0: 0.5, 1: 0.5}, {0: 0.1, 3: 0.9}],
               "t03": [{0: 0.2, 1: 0.3, 2: 0.5}, {1.5: 0.75, 3: 0.25}]}  # 1.5: trec_eval's names read 1
    judgments = {t: dict(docs) for t, docs in qrels.items()}
    for topic, dists in pattern.items():
        retrieved = [d for d in judgments[topic] if any(d in r.get(topic, {}) for r in runs.values())]
        for doc, dist in zip(retrieved, dists):
            judgments[topic][doc] = dist
    return judgments, runs


def brute_force(judgments, runs, names, **reading):
    """For each measure: every world's overall scores (S, worlds) and per-topic scores
    (S, T, worlds), and the worlds' probabilities, from today's evaluation of each world."""
    uncertain = [(t, d, list(v.items())) for t, docs in judgments.items() for d, v in docs.items()
                 if isinstance(v, dict)]
    scale = max(g for docs in judgments.values() for v in docs.values()
                for g in (v if isinstance(v, dict) else {v: 1}) if g > 0)
    measures = expand(names)
    overall, per_topic, weights = [[] for _ in names], [[] for _ in names], []
    for choice in itertools.product(*(dist for _, _, dist in uncertain)):
        world = {t: {d: v for d, v in docs.items() if not isinstance(v, dict)} for t, docs in judgments.items()}
        for (t, d, _), (g, _) in zip(uncertain, choice):
            world[t][d] = g
        weights.append(np.prod([p for _, p in choice]))
        rankings, integer = prepare(qrels_from_dict(world), runs, **reading)
        rankings = replace(rankings, max_grade=float(scale))  # the grade scale, not the world's top
        if integer is not None:
            integer = replace(integer, max_grade=float(np.trunc(scale)))
        for i, (m, score) in enumerate(zip(measures, compute(rankings, measures, "trec_eval", integer))):
            values = np.nan_to_num(score.value)
            per_topic[i].append(values)
            overall[i].append(_aggregate(values, rankings.present, m.spec.average))
    return [np.stack(o, axis=-1) for o in overall], [np.stack(p, axis=-1) for p in per_topic], np.array(weights)


def moments(values, weights):
    mean = values @ weights
    return mean, np.sqrt(np.maximum(((values - mean[..., None]) ** 2) @ weights, 0.0))


NAMES = every_measure()


@pytest.fixture(scope="module")
def case(random_collection):
    judgments, runs = small_case(random_collection)
    return judgments, runs, join(uncertain_from_dict(judgments), runs), brute_force(judgments, runs, NAMES)


def test_every_world_enumerated_equals_brute_force(case):
    _, _, j, (overall, per_topic, weights) = case
    for i, name in enumerate(NAMES):
        s = spread(j, name)
        assert s.overall_path == "enumeration" and set(s.path) == {"enumeration"}, name
        mean, sd = moments(overall[i], weights)
        np.testing.assert_allclose(s.overall.mean, mean, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(s.overall.sd, sd, rtol=1e-9, atol=1e-9, err_msg=name)
        topic_mean, topic_sd = moments(per_topic[i], weights)
        np.testing.assert_allclose(s.topic.mean, topic_mean, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(s.topic.sd, topic_sd, rtol=1e-9, atol=1e-9, err_msg=name)
        for a, b in [(0, 1), (2, 0)]:
            c = compare(s, a, b)
            diff = overall[i][b] - overall[i][a]
            assert c.p_beats == pytest.approx(weights @ (diff > 1e-12), abs=1e-12), name
            assert c.p_tie == pytest.approx(weights @ (np.abs(diff) <= 1e-12), abs=1e-12), name
            assert c.difference.mean == pytest.approx(diff @ weights, abs=1e-12), name
            assert c.difference.sd == pytest.approx(moments(diff[None], weights)[1][0], abs=1e-9), name
            assert c.p_error == 0.0


@pytest.mark.parametrize("reading", [{"judged_only": True, "max_docs": 4}, {"max_docs": 2}, {"topics": "intersection"}])
def test_reading_options_equal_brute_force(case, reading):
    """trec_eval's -J (unjudged documents removed in each world: a grade -1 is drawn in some)
    and -M, measures' own judged_only, and each run's mean over the topics it retrieved for
    (plain trec_eval), in every world."""
    judgments, runs, _, _ = case
    names = ["P@3", "nDCG(judged_only=True)@3", "AP", "ERR@3", "RBP(p=0.5)", "Judged@3", "Unj@3"]
    overall, per_topic, weights = brute_force(judgments, runs, names, **reading)
    j = join(uncertain_from_dict(judgments), runs, **reading)
    for i, name in enumerate(names):
        s = spread(j, name)
        np.testing.assert_allclose(s.topic.mean, moments(per_topic[i], weights)[0], rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(s.overall.mean, moments(overall[i], weights)[0], rtol=1e-12, atol=1e-12,
                                   err_msg=name)
        np.testing.assert_allclose(s.overall.sd, moments(overall[i], weights)[1], rtol=1e-9, atol=1e-9, err_msg=name)
        if expand([name])[0].spec.name in LINEAR:
            linear = spread(j, name, exact_worlds=1)
            # -J with a grade -1 among the possible ones reorders the rankings: no longer linear
            assert linear.overall_path == ("sampled" if "judged_only" in reading else "exact moments"), name
            if linear.overall_path == "exact moments":
                np.testing.assert_allclose(linear.overall.sd, moments(overall[i], weights)[1], rtol=1e-9,
                                           atol=1e-9, err_msg=name)


def test_linear_measures_exact_without_enumeration(case):
    """exact_worlds=1: the linear measures' expectations and standard deviations are still
    exact (per topic and overall); their P(B beats A) is sampled, within 5 Monte Carlo errors."""
    _, _, j, (overall, per_topic, weights) = case
    linear = [i for i, name in enumerate(NAMES) if expand([name])[0].spec.name in LINEAR]
    assert len(linear) >= 15
    for i in linear:
        s = spread(j, NAMES[i], exact_worlds=1, samples=4000)
        assert {"linear"} <= set(s.path) <= {"linear", "enumeration"} and s.overall_path == "exact moments"
        mean, sd = moments(overall[i], weights)
        np.testing.assert_allclose(s.overall.mean, mean, rtol=1e-12, atol=1e-12, err_msg=NAMES[i])
        np.testing.assert_allclose(s.overall.sd, sd, rtol=1e-9, atol=1e-9, err_msg=NAMES[i])
        np.testing.assert_allclose(s.topic.sd, moments(per_topic[i], weights)[1], rtol=1e-9, atol=1e-9,
                                   err_msg=NAMES[i])
        c = compare(s, 0, 1)
        diff = overall[i][1] - overall[i][0]
        assert c.difference.sd == pytest.approx(moments(diff[None], weights)[1][0], abs=1e-9)
        assert abs(c.p_beats - weights @ (diff > 1e-12)) <= 5 * c.p_error + 1e-12, NAMES[i]


def test_sampled_worlds_agree_with_brute_force(case):
    """exact_worlds=1 for the other measures: sampled, the expectation within 5 Monte Carlo
    errors, the standard deviation within 15%, P(B beats A) within 5 errors."""
    _, _, j, (overall, _, weights) = case
    for i, name in enumerate(NAMES):
        if expand([name])[0].spec.name in LINEAR:
            continue
        s = spread(j, name, exact_worlds=1, samples=1000, seed=3)
        assert s.overall_path == "sampled", name
        mean, sd = moments(overall[i], weights)
        assert (np.abs(s.overall.mean - mean) <= 5 * s.overall.error + 1e-12).all(), name
        assert (np.abs(s.overall.sd - sd) <= 0.15 * sd + 1e-12).all(), name
        assert (s.overall.low <= mean + 1e-12).all() and (mean <= s.overall.high + 1e-12).all(), name
        c = compare(s, 0, 1)
        diff = overall[i][1] - overall[i][0]
        assert abs(c.p_beats - weights @ (diff > 1e-12)) <= 5 * c.p_error + 1e-12, name


def test_worlds_do_not_depend_on_the_runs_batched(case):
    """A topic's worlds are keyed by (seed, topic): run0 alone gets the numbers it gets with the others."""
    judgments, runs, j, _ = case
    alone = join(uncertain_from_dict(judgments), {"run0": runs["run0"]})
    for name in ["ERR", "AP", "P@3"]:
        both, one = spread(j, name, exact_worlds=1, samples=50), spread(alone, name, exact_worlds=1, samples=50)
        np.testing.assert_array_equal(both.topic.mean[0], one.topic.mean[0])
        np.testing.assert_array_equal(both.overall.low[0], one.overall.low[0])


def test_probability_one_grades_give_todays_numbers_bitwise(random_collection):
    qrels, runs = random_collection(np.random.default_rng(11), 3, 8)
    j = join(certain(qrels_from_dict(qrels)), runs)
    rankings, integer = prepare(qrels, runs)
    for name, score in zip(NAMES, compute(rankings, expand(NAMES), "trec_eval", integer)):
        s = spread(j, name)
        assert set(s.path) == {"enumeration"} and s.overall_path == "enumeration"
        np.testing.assert_array_equal(s.topic.mean, np.nan_to_num(score.value), err_msg=name)
        # the means of the same rankings (evaluate pads each run to its own depth alone, which can
        # move a sum's last bit where runs differ in depth)
        today = [r["value"] for r in _records(rankings, integer, expand([name]), False, "zero", "macro",
                                              "trec_eval", "trec_eval")]
        np.testing.assert_array_equal(s.overall.mean, today, err_msg=name)
        assert (s.overall.sd == 0).all() and (s.topic.sd == 0).all()


def test_assessors_with_weights_equal_the_pairs_they_stand_for(tmp_path, write):
    """Weights 1, 2, 1; d3 judged by the first and third assessors only."""
    paths = [write(tmp_path / f"a{i}.txt", text) for i, text in enumerate([
        "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d4 1\n",
        "1 0 d1 1\n1 0 d2 2\n2 0 d4 0\n",
        "1 0 d1 0\n1 0 d2 2\n1 0 d3 0\n2 0 d4 1\n"])]
    pairs = {"renormalise": "1 0 d1 0:0.25,1:0.75\n1 0 d2 0:0.25,2:0.75\n1 0 d3 0:0.5,2:0.5\n2 0 d4 0:0.5,1:0.5\n",
             "zero": "1 0 d1 0:0.25,1:0.75\n1 0 d2 0:0.25,2:0.75\n1 0 d3 0:0.75,2:0.25\n2 0 d4 0:0.5,1:0.5\n"}
    runs = {"A": {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d4": 1.0}},
            "B": {"1": {"d3": 3.0, "d2": 2.0}, "2": {"d5": 1.0, "d4": 0.5}}}
    for missing, text in pairs.items():
        combined = combine_assessors(paths, [1, 2, 1], missing=missing)
        written = read_uncertain_qrels(write(tmp_path / f"{missing}.txt", text))
        for name in ["ERR", "nDCG", "P@2", "AP"]:
            x, y = spread(join(combined, runs), name), spread(join(written, runs), name)
            np.testing.assert_allclose(x.overall.mean, y.overall.mean, rtol=1e-12, err_msg=(missing, name))
            np.testing.assert_allclose(x.topic.sd, y.topic.sd, rtol=1e-12, atol=1e-15, err_msg=(missing, name))
            assert compare(x, 0, 1).p_beats == pytest.approx(compare(y, 0, 1).p_beats, abs=1e-12)


def test_one_assessor_is_the_ordinary_qrels(tmp_path, write):
    path = write(tmp_path / "q.txt", "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n")
    u = combine_assessors([path])
    assert u.probs.tolist() == [[1.0], [1.0], [1.0]] and u.grades[:, 0].tolist() == read_qrels(path).grade.tolist()


def test_jensen_adaptive_users_are_not_scored_by_expected_gains():
    """d1 is certain at the top grade 2 (so the expected grades keep the scale); d2 and d3 are
    0 or 2 with probability 1/2: expected grade 1."""
    judgments = {"q": {"d1": 2, "d2": {0: 0.5, 2: 0.5}, "d3": {0: 0.5, 2: 0.5}, "d4": 0}}
    expected = {"q": {"d1": 2, "d2": 1.0, "d3": 1.0, "d4": 0}}
    run = {"r": {"q": {"d2": 4.0, "d3": 3.0, "d1": 2.0, "d4": 1.0}}}
    j = join(uncertain_from_dict(judgments), run)
    for name in ["ERR", "AP", "INST(T=1)", "RBP2"]:
        of_expected = evaluate(expected, run, [name])[0]["value"]
        assert abs(spread(j, name).overall.mean[0] - of_expected) > 1e-3, name
    for name in ["DCG", "RBP(p=0.8)", "SDCG@4"]:
        of_expected = evaluate(expected, run, [name])[0]["value"]
        assert spread(j, name).overall.mean[0] == pytest.approx(of_expected, rel=1e-12), name
    # P is linear in its gains 1[g >= 1], not in the grades: the expected gains are 1/2, 1/2, 1
    assert spread(j, "P@3").overall.mean[0] == pytest.approx((0.5 + 0.5 + 1) / 3, rel=1e-12)


@pytest.mark.parametrize("line, fragment", [
    ("1 0 d2 0:0.5,1:0.4", "probabilities sum to 0.9, not 1"),
    ("1 0 d2 0:0.5,1", "'1' is not a grade:probability pair"),
    ("1 0 d2 0:0.5,0:0.5", "grade '0' is given twice"),
    ("1 0 d2 0:1.5,1:-0.5", "probability '1.5' is not in [0, 1]"),
    ("1 0 d2 x:1", "grade 'x' is not a number"),
    ("1 0 d2 1:nan", "probability 'nan' is not finite"),
    ("1 0 d1 1", "document d1 appears twice for topic 1"),
    ("1 0 d2", "expected 4 fields"),
])
def test_bad_lines_name_file_and_line(tmp_path, write, line, fragment):
    path = write(tmp_path / "u.txt", f"# comment\n1 0 d1 0:0.5,1:0.5\n{line}\n")
    with pytest.raises(InputError) as info:
        read_uncertain_qrels(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: ") and fragment in message and "\n" not in message, message


def test_tolerance_of_the_probabilities(tmp_path, write):
    ok = write(tmp_path / "ok.txt", f"1 0 d1 0:0.5,1:{0.5 + TOLERANCE / 2!r}\n")
    assert read_uncertain_qrels(ok).probs.sum() == pytest.approx(1.0, abs=1e-15)
    bad = write(tmp_path / "bad.txt", f"1 0 d1 0:0.5,1:{0.5 + 2 * TOLERANCE!r}\n")
    with pytest.raises(InputError, match="bad.txt:1: .* not 1"):
        read_uncertain_qrels(bad)


def test_bad_weights_and_options():
    q = qrels_from_dict({"1": {"d": 1}})
    for kwargs, fragment in [({"weights": [1, 2]}, "one per qrels file"), ({"weights": [0]}, "positive"),
                             ({"missing": "drop"}, "missing: expected")]:
        with pytest.raises(InputError, match=fragment):
            combine_assessors([q], **kwargs)
    j = join(certain(q), {"r": {"1": {"d": 1.0}}})
    with pytest.raises(InputError, match="samples"):
        spread(j, "P@1", samples=1)
    with pytest.raises(InputError, match="names 2 measures"):
        spread(j, "P.1,2")


def test_diversity_measures_refused():
    """Diversity measures read subtopic grades, which uncertain qrels do not have: one line."""
    j = join(certain(qrels_from_dict({"1": {"d": 1}})), {"r": {"1": {"d": 1.0}}})
    with pytest.raises(InputError, match="subtopics of diversity qrels"):
        spread(j, "alpha-nDCG@3")


def test_records_and_families(tmp_path, write):
    """What the commands will print: evaluate's records with the spread's fields; a trec_eval
    family expands; a path is read in the pairs format."""
    path = write(tmp_path / "u.txt", "1 0 a 0:0.5,1:0.5\n1 0 b 1\n2 0 c 2\n")
    runs = {"r": {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}}}
    j = join(path, runs)
    found = [records(s, per_topic=True) for s in spreads(j, ["P.1,2"])]
    assert [[(r["topic"], r["measure"], r["value"], r["path"]) for r in rs] for rs in found] == [
        [("1", "P_1", 0.5, "enumeration"), ("2", "P_1", 1.0, "enumeration"), ("all", "P_1", 0.75, "enumeration")],
        [("1", "P_2", 0.75, "enumeration"), ("2", "P_2", 0.5, "enumeration"), ("all", "P_2", 0.625, "enumeration")]]
    assert found[0][0]["sd"] == 0.5 and (found[0][0]["low"], found[0][0]["high"]) == (0.0, 1.0)
    assert found[0][2]["sd"] == 0.25 and found[0][2]["error"] == 0.0


def test_texts_parsed_together_as_one_by_one(tmp_path, write):
    """The fast path (all distinct texts at once) gives what parse_grades gives text by text:
    lone grades, pairs of probability 0, negative and fractional grades, exponents, sums off by
    less than the tolerance."""
    import pyarrow as pa

    from rpdi.metrics.uncertain import _from_lists, _parse_all, parse_grades

    texts = ["2", "-1", "0:0.2,1:0.5,2:0.3", "3:1", "1.5:0.25,0:0,-1:0.75", "1e0:5e-1,2:0.5", "0:0.3333333,1:0.6666666",
             "+4:1.0"]
    path = write(tmp_path / "u.txt", "".join(f"q 0 d{i} {t}\n" for i, t in enumerate(texts)))
    fast = read_uncertain_qrels(path)
    slow = _from_lists([parse_grades(t) for t in texts])
    np.testing.assert_array_equal(fast.grades, slow[0])
    np.testing.assert_array_equal(fast.probs, slow[1])
    assert fast.grades[4].tolist() == [1.5, -1.0, 1.5] and fast.probs[4].tolist() == [0.25, 0.75, 0.0]
    assert _parse_all(pa.array(texts)) is not None  # the fast path took them all
    with pytest.raises(InputError, match="u2.txt:1: grades '1_0:1': grade '1_0' is not a number"):
        read_uncertain_qrels(write(tmp_path / "u2.txt", "q 0 d 1_0:1\n"))
