"""rpdi explain with diversity and intent-aware measures: a ranking given as the intents each
document serves, P(i|q) inline or from a file; the value is the measure's."""

from __future__ import annotations

import json

import pytest

from rpdi.experiments.commands.explain import intent_ranking
from rpdi.metrics.evaluate import compute
from rpdi.metrics.names import parse_measure


@pytest.mark.parametrize("measure", ["alpha-nDCG@5", "ERR-IA@5", "RBP-IA(p=0.5)", "nNRBP"])
def test_the_value_is_the_measures(run_cli, measure):
    ranking, intents = "ab,a,-,b,c,?", "a=0.6,b=0.3,c=0.1"
    status, out, err = run_cli(["explain", measure, "--ranking", ranking, "--intents", intents, "--format", "json"])
    assert status == 0, err
    rankings, _ = intent_ranking(ranking, intents)
    m = parse_measure(measure)
    assert json.loads(out)["value"] == pytest.approx(float(compute(rankings, [m])[0].value[0, 0]), rel=1e-12)


def test_intent_aware_table_says_the_user_draws_an_intent(run_cli, tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("q a 0.5\nq b 0.5\n")
    status, out, err = run_cli(["explain", "P-IA@3", "--ranking", "a,b,b", "--intents", path])
    assert status == 0, err
    assert "draws an intent" in out and "weighted by P(i|q)" in out
    assert "value = 0.5000" in out  # intent a: 1/3, intent b: 2/3


@pytest.mark.parametrize("argv, message", [
    (["alpha-nDCG@5", "--ranking", "a,b!,c"], "intents it is"),
    (["alpha-nDCG@5", "--ranking=-,-"], "no document is relevant"),
    (["alpha-nDCG@5", "--ranking", "a,b", "--intents", "a=x"], "a=0.6"),
    (["RBP", "--intents", "a=1"], "reads no intents"),
])
def test_bad_input_is_one_line(run_cli, argv, message):
    status, out, err = run_cli(["explain", *argv])
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
