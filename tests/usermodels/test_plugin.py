"""A model of one's own is not trusted: at every (rank, state) the exact evaluator visits, its
branch probabilities must be finite, in [0, 1] and sum to 1, and its gains finite; otherwise the
evaluator raises InputError naming the model's file, its class, the rank and the state, and the
command line exits with status 2 and that one line."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from rpdi.experiments.cli import main as rpdi_main
from rpdi.metrics import build_rankings, load_qrels, load_runs
from rpdi.metrics.errors import InputError
from rpdi.usermodels import exact, model_for

# A user with two states (0: fresh, 1: has seen a relevant document); ``BAD`` is spliced into the
# branch that a user in state 1 takes at rank 2 or deeper, so the fault is met only there.
MODEL = '''
import numpy as np
from rpdi.usermodels.base import Branch, BrowsingModel


class Faulty(BrowsingModel):
    parameters = {{}}
    aggregation = "rate"

    def gains(self, grade, view):
        return (grade >= 1).astype(float)

    def n_states(self, view):
        return 2

    def step(self, state, at):
        late = (state == 1) & (at.rank >= 2)
        p = np.where(late, {prob}, 0.5)
        gain = np.where(late, {gain}, at.gain)
        nxt = np.where(at.gain > 0, 1, state)
        return [Branch(p, gain, True, nxt), Branch(0.5, gain, False, nxt)]
'''

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 1}}
RUNS = {"r": {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}}


def _model(tmp_path, prob="0.5", gain="at.gain"):
    path = tmp_path / "faulty.py"
    path.write_text(MODEL.format(prob=prob, gain=gain))
    return path, model_for(f"{path}:Faulty")


@pytest.mark.parametrize("prob, gain, what", [
    ("1.7", "at.gain", "branch 0 has probability 1.7, not in [0, 1]"),
    ("np.nan", "at.gain", "branch 0 has probability nan, not in [0, 1]"),
    ("0.0", "at.gain", "the branch probabilities sum to 0.5, not 1"),
    ("0.5", "np.inf", "branch 0 has gain inf, not a finite number"),
])
def test_a_faulty_model_is_named_with_rank_and_state(tmp_path, prob, gain, what):
    path, model = _model(tmp_path, prob, gain)
    rankings = build_rankings(load_qrels(QRELS), load_runs(RUNS))
    with pytest.raises(InputError) as caught:
        exact(model, rankings)
    assert str(caught.value) == f"{path}: Faulty: at rank 2, state 1: {what}"


def test_a_sound_model_passes(tmp_path):
    _, model = _model(tmp_path)
    rankings = build_rankings(load_qrels(QRELS), load_runs(RUNS))
    e = exact(model, rankings, convention="stop")
    # reads d1 (gain 1), then each next with probability 1/2: E[G] = 1 + 0 + 1/4, E[N] = 1 + 1/2 + 1/4
    np.testing.assert_allclose(e.values["rate"], [[1.25 / 1.75]], rtol=1e-12)


def test_a_fault_in_a_state_never_visited_is_not_one(tmp_path):
    """Probabilities are only checked where users are: with no relevant document nobody reaches
    state 1, where the fault lies."""
    _, model = _model(tmp_path, prob="1.7")
    rankings = build_rankings(load_qrels({"q1": {"d1": 0, "d2": 0}}), load_runs({"r": {"q1": {"d1": 2.0, "d2": 1.0}}}))
    assert np.isfinite(exact(model, rankings).value).all()


def test_the_command_line_reports_the_fault_in_one_line(tmp_path, capsys):
    path, _ = _model(tmp_path, prob="1.7")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\n")
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.0 r\n")
    assert rpdi_main(["simulate", str(qrels), str(run), "-m", f"{path}:Faulty", "--users", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}: Faulty: at rank 2, state 1: branch 0 has probability 1.7" in err[0], err


def test_rule_and_citation_are_stated_once():
    """Each model's browsing rule and citation live in its measure's declaration only; the model
    class reads them from there, and ``rpdi models`` shows them."""
    from rpdi.metrics import MEASURES
    from rpdi.usermodels import MODELS

    out = []
    for name, cls in MODELS.items():
        assert not re.search(r"^\s+(rule|citation)\s*[:=]", inspect.getsource(cls), re.M), name
        assert (cls.rule, cls.citation) == (MEASURES[name].user_model, MEASURES[name].citation), name
        out.append(f"    user: {MEASURES[name].user_model}\n    ref:  {MEASURES[name].citation}")
    import io
    from contextlib import redirect_stdout

    with redirect_stdout(io.StringIO()) as shown:
        assert rpdi_main(["models"]) == 0
    for text in out:
        assert text in shown.getvalue()
