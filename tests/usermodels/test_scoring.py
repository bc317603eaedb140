"""usermodels.scoring and usermodels.plugin: every browsing model is a measure, however it is named.

A model with no closed form is valued by its exact expectation; the values are checked against
hand computations of the user's sessions, and the ways of naming a model (a file relative to the
working directory or a config, a module path, the class, an instance) against each other.
"""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path

import numpy as np
import pytest

import rpdi
from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.experiments.cli import main
from rpdi.metrics.errors import InputError
from rpdi.metrics import build_rankings, load_qrels, load_runs
from rpdi.usermodels import RBP, exact, model_for
from rpdi.usermodels.examples.two_strikes import TwoStrikes
from rpdi.usermodels.plugin import load_plugin
from rpdi.usermodels.scoring import resolve

MODULE = "rpdi.usermodels.examples.two_strikes:TwoStrikes"
EXAMPLE = os.path.join(os.path.dirname(inspect.getfile(TwoStrikes)), "two_strikes.py")


def two_strikes_by_hand(grades, n, k=None):
    """E[G]/E[N] of the deterministic user who stops after n non-relevant documents in a row (or
    at rank k), the ranking padded with non-relevant documents: its one session, read rank by rank."""
    grades = list(grades) + [0] * (n + 1)
    gain = misses = read = 0
    for g in grades:
        read += 1
        gain += g >= 1
        misses = 0 if g >= 1 else misses + 1
        if misses == n or read == k:
            return gain / read


@pytest.mark.parametrize("grades", [[1, 0, 0, 1], [0, 0], [1, 1, 1], [0, 1, 0, 1, 0, 0, 1], [0], []])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_model_of_ones_own_scores_its_exact_expectation(grades, n):
    expected = two_strikes_by_hand(grades, n)
    for named in (TwoStrikes(n=n), f"{MODULE}(n={n})", f"{EXAMPLE}:TwoStrikes(n={n})"):
        assert rpdi.score(named, grades) == pytest.approx(expected, abs=1e-12), named


def test_the_class_is_the_model_at_its_defaults():
    assert rpdi.score(TwoStrikes, [1, 0, 0, 1]) == rpdi.score(TwoStrikes(n=2), [1, 0, 0, 1])


def test_a_built_in_model_given_as_an_instance_keeps_its_closed_form():
    m = RBP(p=0.8, cutoff=10)
    assert m.measure.text == "RBP(p=0.8)@10" and m.k == 10
    assert rpdi.score(m, [1, 1, 0, 1]) == rpdi.score("RBP(p=0.8)@10", [1, 1, 0, 1])
    assert resolve(m).spec.method == "closed_form"


def test_parameters_of_a_model_are_checked_as_in_a_name():
    with pytest.raises(InputError, match="TwoStrikes has no parameter 'm'"):
        TwoStrikes(m=2)
    with pytest.raises(InputError, match="p=1.5 out of range"):
        RBP(p=1.5)
    with pytest.raises(TypeError, match="not both"):
        RBP("RBP(p=0.5)", p=0.8)


def test_evaluate_says_which_values_are_exact_and_gives_the_tails_interval():
    qrels = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"d": 1}}
    runs = {"sys": {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 2.0, "d": 1.0}}}
    records = rpdi.evaluate(qrels, runs, [TwoStrikes(n=2), "P@2"], per_topic=True)
    own = {r["topic"]: r for r in records if r["measure"] == "TwoStrikes(n=2)"}
    assert {r["method"] for r in own.values()} == {"exact"}
    assert {r["method"] for r in records if r["measure"] == "P@2"} == {"closed_form"}
    # q1 reads a, b, c and the tail: c relevant resets the count, so the user reads two unknown
    # documents: valued as non-relevant, 2 gains in 5 documents; at most, the tail is relevant
    # all the way to the horizon, and the interval's width is what the tail can add
    assert own["q1"]["value"] == pytest.approx(2 / 5)
    assert own["q1"]["residual"] > 0.5
    # q2: x (miss), d (relevant), then two unknown documents: 1 gain in 4
    assert own["q2"]["value"] == pytest.approx(1 / 4)
    assert own["all"]["value"] == pytest.approx((2 / 5 + 1 / 4) / 2)


def test_a_file_is_found_relative_to_a_base_folder_first(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    source = open(EXAMPLE).read()
    (tmp_path / "conf" / "mine.py").write_text(source.replace('"n": 2', '"n": 1'))
    (tmp_path / "mine.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    assert load_plugin("mine.py:TwoStrikes").n == 2  # the working directory's
    assert load_plugin("mine.py:TwoStrikes", base=str(tmp_path / "conf")).n == 1  # the config's
    assert load_plugin("mine.py:TwoStrikes", base=str(tmp_path / "elsewhere")).n == 2  # then the working directory's


def test_a_model_file_is_executed_once(tmp_path):
    log = tmp_path / "log"
    (tmp_path / "m.py").write_text(f"open({str(log)!r}, 'a').write('x')\n" + open(EXAMPLE).read())
    for n in (1, 2, 3):
        model_for(f"{tmp_path / 'm.py'}:TwoStrikes(n={n})")
    assert log.read_text() == "x"


@pytest.mark.parametrize("text, message", [
    ("no.such.module:Model", "No module named .no."),
    ("rpdi.usermodels.examples.two_strikes:Nope", "defines no BrowsingModel subclass 'Nope'"),
    ("missing.py:Model", "missing.py: no such file"),
])
def test_bad_names_of_models_are_one_line_errors(text, message):
    with pytest.raises(InputError, match=message) as caught:
        model_for(text)
    assert "\n" not in str(caught.value) and repr(text) in str(caught.value)


def test_the_short_api_shows_real_signatures():
    for name in ("evaluate", "score", "simulate", "compare", "exact", "model_for"):
        params = inspect.signature(getattr(rpdi, name)).parameters
        assert "args" not in params and len(params) >= 2, name
    assert "measures" in inspect.signature(rpdi.simulate).parameters


def test_a_model_and_its_name_give_the_same_exact_values():
    rng = np.random.default_rng(5)
    grades = rng.integers(0, 2, size=12).tolist()
    by_name = rpdi.score(f"{MODULE}(n=3)@8", grades)
    by_instance = rpdi.score(TwoStrikes(n=3, cutoff=8), grades)
    assert by_name == by_instance == pytest.approx(two_strikes_by_hand(grades, 3, k=8))


# -- the prototyping loop on real runs: eval, compare, a config ------------------------------

def _cast_by_hand(n: int) -> dict[tuple[str, str], float]:
    """TwoStrikes(n) on every CAsT 2021 ranking by hand: the ranking's grades in trec_eval's
    order (unjudged as non-relevant, the valued end of the unknown convention's interval)."""
    r = build_rankings(load_qrels(CAST2021_QRELS), load_runs(cast2021_runs()), "qrels")
    return {(run, str(topic)): two_strikes_by_hand(r.grade[s, t, :r.length[s, t]].tolist(), n)
            for s, run in enumerate(r.runs) for t, topic in enumerate(r.topics)}


def test_rpdi_eval_scores_a_model_of_ones_own_on_cast(capsys):
    status = main(["eval", CAST2021_QRELS, *cast2021_runs(), "-m", f"{EXAMPLE}:TwoStrikes(n=2)",
                   "--per-topic", "--format", "json"])
    records = json.loads(capsys.readouterr().out)
    assert status == 0 and {r["method"] for r in records} == {"exact"}
    by_hand = _cast_by_hand(2)
    per_topic = [r for r in records if r["topic"] != "all"]
    assert len(per_topic) == len(by_hand) == 5 * 158
    for r in per_topic:
        assert r["value"] == pytest.approx(by_hand[r["run"], r["topic"]], abs=1e-12), r
    # and the exact evaluator's values and intervals, as rpdi simulate reports them
    rankings = build_rankings(load_qrels(CAST2021_QRELS), load_runs(cast2021_runs()), "qrels")
    expected = exact(model_for(f"{EXAMPLE}:TwoStrikes(n=2)"), rankings, "unknown")
    index = {(run, str(topic)): (s, t) for s, run in enumerate(rankings.runs)
             for t, topic in enumerate(rankings.topics)}
    for r in per_topic:
        s, t = index[r["run"], r["topic"]]
        assert (r["value"], r["residual"]) == (expected.value[s, t], expected.residual[s, t])


def test_rpdi_compare_takes_a_model_of_ones_own(capsys):
    status = main(["compare", CAST2021_QRELS, *cast2021_runs(), "-m", f"{MODULE}(n=2)", "-m", "AP",
                   "--discriminative-power", "--resamples", "500", "--format", "json"])
    power = {r["measure"]: r for r in json.loads(capsys.readouterr().out)}
    assert status == 0 and power[f"{MODULE}(n=2)"]["pairs"] == 10
    main(["compare", CAST2021_QRELS, *cast2021_runs(), "-m", f"{MODULE}(n=2)", "--resamples", "500",
          "--format", "json"])
    pairs = json.loads(capsys.readouterr().out)
    by_hand = _cast_by_hand(2)
    means = {run: np.mean([v for (r, _), v in by_hand.items() if r == run]) for run, _ in by_hand}
    names = {os.path.basename(p).split(".")[0] for p in cast2021_runs()}
    assert len(pairs) == 10 and {p["run_a"] for p in pairs} | {p["run_b"] for p in pairs} == names
    for p in pairs:
        assert p["mean_a"] == pytest.approx(means[p["run_a"]]) and p["mean_b"] == pytest.approx(means[p["run_b"]])


def test_a_config_compares_a_model_of_ones_own_as_rpdi_compare_does(tmp_path, capsys):
    (tmp_path / "mine.toml").write_text(
        f'[experiment]\nname = "mine"\nusers = 0\n\n[data]\nqrels = "{CAST2021_QRELS}"\n'
        f'runs = {json.dumps(cast2021_runs())}\n\n[[measures]]\nname = "{MODULE}(n=2)"\n\n'
        f'[compare]\nresamples = 500\ndiscriminative_power = true\n\n[output]\nplots = false\n')
    status = main(["run", str(tmp_path / "mine.toml"), "--out", str(tmp_path / "out")])
    assert status == 0, capsys.readouterr()
    capsys.readouterr()
    config = {(p["run_a"], p["run_b"]): p for p in json.loads((tmp_path / "out" / "compare.json").read_text())}
    main(["compare", CAST2021_QRELS, *cast2021_runs(), "-m", f"{MODULE}(n=2)", "--resamples", "500",
          "--format", "json"])
    for p in json.loads(capsys.readouterr().out):
        q = config[p["run_a"], p["run_b"]]
        assert p["method"] == q["method"] == "exact"
        assert (q["mean_a"], q["mean_b"], q["p"]) == pytest.approx((p["mean_a"], p["mean_b"], p["p"]))


# ---------------------------------------------------------------------------------------------
# Diversity qrels as a dict {topic: {subtopic: {docno: grade}}}

SMALL = Path(__file__).parents[1] / "data" / "diversity"  # tests/metrics/test_diversity.py's collection
DIVERSITY = (SMALL / "small.qrels").read_text()


def _scores(path) -> dict:
    """A run file as {topic: {docno: score}}."""
    scores = {}
    for topic, _, docno, _, score, _ in map(str.split, path.read_text().splitlines()):
        scores.setdefault(topic, {})[docno] = float(score)
    return scores


DIVERSITY_RUN = {"r": _scores(SMALL / "small.run")}
DIVERSE = ["alpha-nDCG@10", "ERR-IA@10", "NRBP", "P-IA@5", "RBP-IA", "alpha_nDCG@5", "P@10", "nDCG@10"]


def _nested(text, rename=str):
    nested = {}
    for line in text.splitlines():
        topic, subtopic, docno, grade = line.split()
        nested.setdefault(topic, {}).setdefault(subtopic, {})[rename(docno)] = float(grade)
    return nested


@pytest.mark.parametrize("rename", [str, lambda d: str(10 + int(d[1:]))], ids=["docnos", "numeric_docnos"])
def test_diversity_qrels_as_a_dict_are_the_file(tmp_path, rename):
    """Read by the diversity and intent-aware measures (and the plain ones beside them), the
    dict gives the file's values, topic by topic; numeric docnos (which could be grades of a
    distribution {grade: probability}) are read so too when such a measure is asked for."""
    path = tmp_path / "div.qrels"
    path.write_text("".join(f"{t} {s} {rename(d)} {g}\n" for t, s, d, g in map(str.split, DIVERSITY.splitlines())))
    run = {"r": {t: {rename(d) if d != "x1" else d: s for d, s in docs.items()}
                 for t, docs in DIVERSITY_RUN["r"].items()}}
    from_dict = rpdi.evaluate(_nested(DIVERSITY, rename), run, DIVERSE, per_topic=True)
    from_file = rpdi.evaluate(str(path), run, DIVERSE, per_topic=True)
    assert from_dict == [dict(r) for r in from_file]
    assert {r["measure"] for r in from_dict} == set(DIVERSE) and len(from_dict) == 3 * len(DIVERSE)
    assert len({r["value"] for r in from_dict}) > 3


def test_diversity_dict_with_plain_measures_alone_is_one_line():
    """Alone, a plain measure reads a dict as {topic: {docno: grade}} or grade distributions: a
    diversity dict is neither, and says so in one line (as a diversity qrels file, read as plain
    qrels, names a document given twice)."""
    for nested in (_nested(DIVERSITY), _nested(DIVERSITY, lambda d: str(10 + int(d[1:])))):
        with pytest.raises(InputError) as info:
            rpdi.evaluate(nested, DIVERSITY_RUN, ["P@10"])
        message = str(info.value)
        assert "\n" not in message and "topic 1" in message and "diversity" in message
