"""rpdi compare with intent-aware measures: per intent, which run's users fare better. A run that
serves the majority intent and sacrifices the others wins that intent's users and loses the
others', whatever the means say."""

from __future__ import annotations

import json

import pytest

from rpdi.experiments.compare import compare
from rpdi.experiments.synthetic_diversity import synthetic_diversity, write_diversity


@pytest.fixture(scope="module")
def served():
    """Run A serves each topic's most likely intent only, run B the others only."""
    return synthetic_diversity(topics=16, seed=11, focus={"A": (1.0, 0.0), "B": (0.0, 1.0)})


@pytest.mark.parametrize("measure", ["ERR-IA@20", "RBP-IA(p=0.8)", "P-IA@10"])
def test_per_intent_preferences_point_the_right_way(served, measure):
    qrels, runs, intents = served
    records, per_intent = compare(qrels, runs, [measure], users=0, intents=intents, by_intent=True, resamples=2000)
    assert len(records) == 1 and records[0]["user_b_better"] is not None
    first = [r for r in per_intent if r["intent"] == 1]
    others = [r for r in per_intent if r["intent"] > 1]
    assert len(first) == 1 and first[0]["topics"] == 16 and others
    assert first[0]["user_b_better"] < 0.5 and first[0]["significant"]  # the majority intent's users: A
    assert first[0]["probability"] == max(r["probability"] for r in per_intent)
    assert others[0]["user_b_better"] > 0.5 and others[0]["significant"]  # the second intent's users: B
    weighted = sum(r["user_b_better"] * r["probability"] * r["topics"] for r in others)
    assert weighted / sum(r["probability"] * r["topics"] for r in others) > 0.5  # the minority intents' users: B


def test_a_plain_measure_has_no_intents(served):
    qrels, runs, intents = served
    _, per_intent = compare(qrels, runs, ["alpha-nDCG@10"], users=0, intents=intents, by_intent=True, resamples=200)
    assert per_intent == []  # alpha-nDCG's user is interested in every intent at once


def test_command_prints_and_plots_the_intents(served, tmp_path, run_cli):
    paths = write_diversity(tmp_path, *served)
    status, out, err = run_cli(["compare", paths["qrels"], *paths["runs"], "-m", "ERR-IA@20", "--users", "0",
                                "--intents", paths["intents"], "--plots", tmp_path / "plots", "--resamples", "500"])
    assert status == 0, err
    assert "Users per intent" in out and "better for them" in out
    assert (tmp_path / "plots" / "intents.png").stat().st_size > 10_000
    status, out, err = run_cli(["compare", paths["qrels"], *paths["runs"], "-m", "ERR-IA@20", "--users", "0",
                                "--intents", paths["intents"], "--format", "json", "--resamples", "500"])
    data = json.loads(out)
    assert status == 0 and {"pairs", "intents"} <= set(data) and data["intents"][0]["intent"] == 1


def test_intents_without_an_intent_measure_are_refused(served, tmp_path, run_cli):
    paths = write_diversity(tmp_path, *served)
    status, _, err = run_cli(["compare", paths["qrels"], *paths["runs"], "-m", "P@10", "--intents", paths["intents"]])
    assert status == 2 and "intents" in err
