"""``rpdi explain`` (experiments/commands/explain.py): the table, the JSON, the plot, and bad
input in one line with exit status 2."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest
from cwl.ruler import cwl_ruler
from cwl.ruler.ranking import Ranking

from rpdi.choices import TABLE_II_RANKING
from rpdi.experiments.cli import main as rpdi_main
from rpdi.experiments.commands.explain import parse_ranking
from rpdi.metrics.errors import InputError
from rpdi.usermodels.examples.two_strikes import TwoStrikes

TWO_STRIKES = inspect.getfile(TwoStrikes) + ":TwoStrikes(n=2)"


def run(capsys, argv):
    status = rpdi_main(["explain", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_table_shows_the_user_and_the_rbp_paper_s_ranking_by_default(capsys):
    status, out, err = run(capsys, ["RBP(p=0.8)"])
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("RBP(p=0.8): ") and "rate = E[G]/E[N]" in lines[1]
    assert f"ranking: {TABLE_II_RANKING}" in lines
    assert "E[N] = 5.0000, value = 0.4526" in out
    rows = {line.split()[0]: line.split() for line in lines if line[:1].isdigit()}
    assert len(rows) == len(TABLE_II_RANKING)
    assert rows["1"][1:] == ["1", "1.0000", "1.0000", "0.8000", "0.2000", "0.2000"]  # grade gain V C W L
    assert rows["3"][5] == "0.1280"  # 0.2 x 0.8^2


@pytest.mark.parametrize("measure,metric", [
    ("IFT-C1-C2(T=1.0,b1=0.9,R1=1.0,A=0.2,b2=0.9,R2=1.0)", "IFTGoalRateCWLMetric(1.0, 0.9, 1.0, 0.2, 0.9, 1.0)"),
    ("U(L=5.0)", "UMeasureCWLMetric(5.0)"), ("BPM(T=2.0)@4", "BPMCWLMetric(2.0, 4)"),
])
def test_the_cwl_numbers_are_cwl_eval_s_with_their_residuals(capsys, measure, metric):
    """EU, ETU, ED and their residuals (``cwl_eval -r``) on $$-?-$ (``?`` unjudged), through
    cwl_eval's Python API; the user's horizon is cwl_eval's max_depth, 1000. ETU is compared
    with what cwl_eval leaves out past rank 1000 added back (tests/usermodels/test_cwl_eval.py)."""
    record = json.loads(run(capsys, [measure, "--ranking", "$$-?-$", "--format", "json"])[1])
    theirs = eval(metric, vars(cwl_ruler))  # noqa: S307 (a constant of this test)
    theirs.residuals = True
    ranking = Ranking("1", [1.0, 1.0, 0.0, np.nan, 0.0, 1.0], [np.nan] * 6)
    theirs.measure(ranking)
    for key, eu, res in [("rate", theirs.expected_utility, theirs.residual_expected_utility),
                         ("total", theirs.expected_total_utility, theirs.residual_expected_total_utility),
                         ("depth", theirs.expected_items, theirs.residual_expected_items)]:
        leak = {}
        if key == "total":
            for worst in (True, False):
                c = theirs.c_vector(ranking, worst)
                leak[worst] = np.prod(c) * ranking.get_gain_vector(worst).sum()
            eu, res = eu + leak[True], res + leak[False] - leak[True]
        assert record["cwl"][key]["value"] == pytest.approx(eu, abs=1e-9), key
        assert record["cwl"][key]["residual"] == pytest.approx(res, abs=1e-9), key


def test_json_gives_every_rank_and_the_expected_depth(capsys):
    status, out, _ = run(capsys, ["RBP(p=0.5)", "--ranking", "1,0,2", "--depth", "5", "--format", "json"])
    assert status == 0
    record = json.loads(out)
    assert record["grades"] == [1.0, 0.0, 2.0] and record["ranking"] == "1,0,2"
    assert [r["rank"] for r in record["ranks"]] == [1, 2, 3, 4, 5]
    assert [r["W"] for r in record["ranks"]] == pytest.approx([0.5, 0.25, 0.125, 0.0625, 0.03125])
    assert record["expected_depth"] == pytest.approx(2.0)
    # grades 1, 0, 2 of max 2: gains 0.5, 0, 1 at weights 0.5, 0.25, 0.125
    assert record["value"] == pytest.approx(0.5 * 0.5 + 1.0 * 0.125)


def test_a_model_of_one_s_own_is_explained(capsys):
    status, out, _ = run(capsys, [TWO_STRIKES, "--ranking", "$-$--$", "--format", "json"])
    assert status == 0
    record = json.loads(out)
    assert [r["L"] for r in record["ranks"]] == [0, 0, 0, 0, 1, 0]  # two misses in a row at ranks 4, 5
    assert record["user"].startswith("reads until n non-relevant") and record["aggregation"] == "rate"


def test_a_drawn_target_is_said_to_give_expected_weights(capsys):
    status, out, _ = run(capsys, ["AP"])
    assert status == 0 and "W(i) is the expected weight" in out
    status, out, _ = run(capsys, ["RBP(p=0.8)"])
    assert "expected weight" not in out


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_the_plot_is_written_as_asked(tmp_path, capsys, suffix, magic):
    path = tmp_path / f"cwl{suffix}"
    status, _, err = run(capsys, ["ERR@10", "--plot", str(path)])
    assert status == 0, err
    assert path.read_bytes().startswith(magic)


@pytest.mark.parametrize("argv, says", [
    (["Nonsense"], "unknown measure 'Nonsense'"),
    (["Bpref"], "has no browsing model"),
    (["AP", "--ranking", "abc"], "--ranking 'abc': expected grades"),
    (["AP", "--ranking", "1,,2"], "--ranking '1,,2'"),
    (["AP", "--ranking", "$x$"], "--ranking '$x$'"),
    (["AP", "--ranking="], "--ranking '': expected"),
    (["AP", "--depth", "0"], "--depth: must be between 1"),
    (["AP", "--plot", "cwl.pdf"], "--plot cwl.pdf: expected a .png or .svg file"),
])
def test_bad_input_is_one_line_and_status_2(capsys, argv, says):
    status, out, err = run(capsys, argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("rpdi explain: ") and says in err, err


def test_rankings_are_read_as_grades_or_symbols():
    assert parse_ranking("1, 1 0,2.5") == [1.0, 1.0, 0.0, 2.5]
    assert parse_ranking("$-?") == [1.0, 0.0, None]
    with pytest.raises(InputError):
        parse_ranking("1,-1")
