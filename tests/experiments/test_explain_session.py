"""``rpdi explain`` of session measures (experiments/commands/explain_session.py): the session
user turn by turn on an example session, checked against the papers' formulas written here."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rpdi.experiments.commands.explain_session import SESSION_RANKING, example_session
from rpdi.metrics.view import View
from rpdi.metrics.names import parse_measure


def explained(run_cli, *argv) -> dict:
    status, out, err = run_cli(["explain", *argv, "--format", "json"])
    assert status == 0 and err == "", err
    return json.loads(out)


def test_srbp_s_user_reads_on_moves_on_and_stops_as_lipani_et_al_say(run_cli):
    """Lipani, Carterette & Yilmaz (2019): after a document the user reads on with p, down with b
    or to the next query with 1 - b; rank i of turn q is read with x^(q-1) (b p)^(i-1),
    x = p(1 - b)/(1 - b p) (a turn's ranks below the last read count as nothing)."""
    p, b = 0.8, 0.6
    record = explained(run_cli, "sRBP(p=0.8,b=0.6)")
    assert record["session"] == SESSION_RANKING and record["width"] == 5
    x = p * (1 - b) / (1 - b * p)
    ranks = {(r["turn"], r["rank"]): r for r in record["ranks"]}
    for (q, i), r in ranks.items():
        assert r["V"] == pytest.approx(x ** (q - 1) * (b * p) ** (i - 1), rel=1e-12)
        last_turn = 1 - b * p if i < 5 else 1.0  # on the last turn who would move on stops
        assert r["stop"] == pytest.approx((1 - p if i < 5 else (1 - p) / (1 - b * p)) if q < 3 else last_turn)
        assert r["down"] == pytest.approx(b * p if i < 5 else 0.0)
        assert r["next"] == pytest.approx(((1 - b) * p if i < 5 else x) if q < 3 else 0.0, rel=1e-12, abs=1e-12)
    assert [t["reached"] for t in record["per_turn"]] == pytest.approx([1, x, x * x])
    grades = [[c == "$" for c in turn] for turn in SESSION_RANKING.split("|")]
    srbp = (1 - p) * sum(x ** q * (b * p) ** i for q, turn in enumerate(grades) for i, g in enumerate(turn) if g)
    assert record["value"] == pytest.approx(srbp, rel=1e-12)


def test_sdcg_s_query_discount_is_the_chance_of_reaching_a_turn(run_cli):
    """Järvelin et al. (2008): rank i of turn q weighs 1/((1 + log_bq q) max(1, log_b i)); the
    user reaches turn q with the query discount and reads rank i of it with the rank discount."""
    record = explained(run_cli, "sDCG(bq=4)@3", "--ranking", "2,0,1|0|0,3,0,1")
    assert record["width"] == 3  # the cutoff: the fourth rank of turn 3 is not read
    reached = [t["reached"] for t in record["per_turn"]]
    assert reached == pytest.approx([1 / (1 + math.log(q, 4)) for q in (1, 2, 3)], rel=1e-12)
    for r in record["ranks"]:
        assert r["V"] == pytest.approx(reached[r["turn"] - 1] / max(1.0, math.log2(r["rank"])), rel=1e-12)
    turns = [[2, 0, 1], [0], [0, 3, 0]]
    sdcg = sum(g / ((1 + math.log(q, 4)) * max(1.0, math.log2(i))) for q, t in enumerate(turns, 1)
               for i, g in enumerate(t, 1))
    assert record["value"] == pytest.approx(sdcg, rel=1e-12)
    # the turn of one rank is short: its ranks 2 and 3 are unknown, and the upper end says so
    assert record["upper"] == pytest.approx(sdcg + 3 * (1 + 1 / math.log2(3)) / (1 + math.log(2, 4)), rel=1e-12)



@pytest.mark.parametrize("measure", ["sRBP(p=0.8,b=0.6)@3", "sDCG@3", "esCG@3", "esDCG@3", "esnDCG@3", "nsDCG@3"])
def test_w_when_shown_weighs_the_gains_to_the_value(run_cli, measure):
    """W is shown only where sum_q,i W(q, i) g(q, i) is the value (esDCG's path discount is not
    V: its sum of V g is 4.14, its value 2.985 on this session)."""
    record = explained(run_cli, measure, "--ranking", "1,0,2|2,1,0")
    shown = [r for r in record["ranks"] if r["W"] is not None]
    if shown:
        assert len(shown) == len(record["ranks"])
        assert sum(r["W"] * r["gain"] for r in shown) == pytest.approx(record["value"], rel=1e-12)
    else:
        assert any("W is not defined" in n or "W is given for a total" in n or "divided" in n
                   for n in record["notes"]), record["notes"]

def test_a_session_user_of_one_s_own_is_explained_and_the_table_says_what_it_does(run_cli):
    """The Conversation user moves on when answered (probability the gain): where a turn answers
    nothing nobody moves on, so nobody reaches the turn after it."""
    record = explained(run_cli, "rpdi.usermodels.conversation:Conversation(p=0.8)", "--ranking", "4,0|0,0|4")
    first = record["ranks"][0]
    assert first["next"] == pytest.approx(1.0) and first["down"] == pytest.approx(0.0)
    assert [t["reached"] for t in record["per_turn"]] == pytest.approx([1.0, 1.0, 0.0])
    assert record["per_turn"][2]["moves_on"] is None  # nobody there
    status, out, err = run_cli(["explain", "sRBP(p=0.8,b=0.6)"])
    assert status == 0 and err == ""
    assert f"session: {SESSION_RANKING} (3 turns, 5 ranks read each)" in out
    assert "R(q): P(reaching turn q), the query-position discount" in out
    header = next(line for line in out.splitlines() if line.startswith("turn  rank"))
    assert header.split() == ["turn", "rank", "grade", "gain", "V", "down", "next", "stop", "W"]


def test_the_example_session_is_what_sdcg_s_closed_form_reads():
    m = parse_measure("sDCG@4")
    session = example_session([[1.0, None], [2.0, 0.0, 1.0]], 4)
    assert session.width == 4 and session.turns.tolist() == [2]
    assert session.grid(session.judged)[0, 0].tolist() == [[True, False, False, False], [True, True, True, False]]
    expected = 1 + (2 + 1 / math.log2(3)) / (1 + math.log(2, 4))
    assert float(m.compute(View(session)).value[0, 0]) == pytest.approx(expected, rel=1e-12)
    assert np.isclose(session.max_grade, 2.0)


@pytest.mark.parametrize("argv,says", [
    (["sRBP", "--depth", "3"], "rpdi explain: --depth: not for a session measure (sRBP) yet"),
    (["sDCG", "--plot", "x.png"], "rpdi explain: --plot: not for a session measure (sDCG) yet"),
    (["sRBP", "--intents", "a=1"], "rpdi explain: --intents: sRBP reads no intents"),
    (["sRBP", "--ranking", "$$|x"], "rpdi explain: --ranking 'x': expected grades"),
    (["sRBP", "--ranking", "$$||$"], "rpdi explain: --ranking '': expected grades"),
])
def test_bad_input_is_one_line_and_status_2(run_cli, tmp_path, monkeypatch, argv, says):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(["explain", *argv])
    assert status == 2 and out == "" and err.startswith(says) and err.count("\n") == 1, err
