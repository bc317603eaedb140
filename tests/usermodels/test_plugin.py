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


# ------------------------------------------------------------------ code that ends the process, prints, or
# returns what rpdi cannot use (issue 24): one line naming the measure, the file and the class, status 2

SOUND = '''
import os, signal, sys
import numpy as np
from rpdi.usermodels.base import Branch, BrowsingModel, geometric
{top}

class Own(BrowsingModel):
    parameters = {{"p": 0.5}}
    aggregation = "rate"
{attrs}
    def step(self, state, at):
{step}
        return geometric(self.p, at.gain)
'''


def _own(tmp_path, top="", step="pass", attrs=""):
    """A model file ``own.py`` (class ``Own``, RBP-like) with ``top`` run at import, ``step``'s
    first statement and ``attrs`` among the class's body; the qrels and run it is used on."""
    (tmp_path / "own.py").write_text(SOUND.format(top=top, step="        " + step, attrs=attrs))
    (tmp_path / "q.txt").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d1 1\n")
    (tmp_path / "r.txt").write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n2 Q0 d1 1 1.0 t\n")
    return str(tmp_path / "own.py"), [tmp_path / "q.txt", tmp_path / "r.txt"]


def _reported(run_cli, path, files, *fragments, measure=None):
    """Each command that loads the model exits with status 2, nothing on stdout and one line on
    stderr naming the measure, the file and ``fragments``."""
    measure = measure or f"{path}:Own"
    for argv in (["eval", *files, "-m", measure],
                 ["simulate", *files, "-m", measure, "--users", "10"],
                 ["properties", "-m", measure + "@3"],
                 ["explain", measure]):
        status, out, err = run_cli(argv)
        assert status == 2 and out == "", (argv, status, out, err)
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        for fragment in (measure, path) + fragments:
            assert fragment in err, (fragment, err)


@pytest.mark.parametrize("top, step, what", [
    ("sys.exit(0)", "pass", "cannot be loaded: called sys.exit(0)"),
    ("raise SystemExit(3)", "pass", "cannot be loaded: called sys.exit(3)"),
    ("raise KeyboardInterrupt", "pass", "cannot be loaded: KeyboardInterrupt"),
    ("", "sys.exit(0)", "Own.step raised called sys.exit(0)"),
    ("", "raise KeyboardInterrupt", "Own.step raised KeyboardInterrupt"),
])
def test_a_model_that_exits_or_interrupts_is_reported(tmp_path, run_cli, top, step, what):
    """Before: ``sys.exit(0)`` at import ended rpdi with status 0 and no output at all, and a
    ``raise KeyboardInterrupt`` printed "interrupted" (status 130) naming no model."""
    path, files = _own(tmp_path, top=top, step=step)
    _reported(run_cli, path, files, what)


def test_a_real_interrupt_during_a_models_code_is_an_interruption(tmp_path, run_cli):
    """A SIGINT (Ctrl-C) arriving while the model's own code runs interrupts the command, as
    anywhere else: it is not the model's fault."""
    path, files = _own(tmp_path, step="signal.raise_signal(signal.SIGINT)")
    status, out, err = run_cli(["simulate", *files, "-m", f"{path}:Own", "--users", "10"])
    assert status == 130 and out == "" and err == "rpdi simulate: interrupted\n"


def test_what_a_model_prints_goes_to_stderr(tmp_path, run_cli):
    """Standard output carries rpdi's results only: a model's prints (at import, in step) go to
    standard error, and the JSON on standard output stays valid."""
    import json

    path, files = _own(tmp_path, top="print('loading own model')", step="print('stepping')")
    status, out, err = run_cli(["eval", *files, "-m", f"{path}:Own", "--format", "json"])
    assert status == 0, err
    assert [r["topic"] for r in json.loads(out)] == ["all"]
    assert "loading own model" in err and "stepping" in err and "stepping" not in out


@pytest.mark.parametrize("attrs, what", [
    ("    aggregation = None", "Own: class attribute aggregation is missing"),
    ("    aggregation = 'mean'", "Own: class attribute aggregation is 'mean': set it to 'rate'"),
    ("    parameters = [0.5]", "Own: class attribute parameters is [0.5], not a dict"),
    ("    parameters = {'p': None}", "Own: class attribute parameters: p = None"),
    ("    horizon = 0", "Own: class attribute horizon is 0, not a whole number >= 1"),
    ("    halflife = -1.0", "Own: class attribute halflife is -1.0"),
    ("    normalised = 'yes'", "Own: class attribute normalised is 'yes'"),
    ("    step = BrowsingModel.step", "Own: defines no step(self, state, at) method"),
])
def test_a_models_declaration_is_checked_when_loaded(tmp_path, run_cli, attrs, what):
    """Before: a missing ``aggregation`` ended ``rpdi simulate`` with "internal error:
    AttributeError ...", status 1 (the status of a disagreement)."""
    path, files = _own(tmp_path, attrs=attrs + "\n")
    source = (tmp_path / "own.py").read_text()
    if "step = BrowsingModel.step" in attrs:  # the class's own step comes later and would win
        source = source.replace("    def step(self, state, at):", "    def stepping(self, state, at):")
        (tmp_path / "own.py").write_text(source)
    _reported(run_cli, path, files, what)


def test_a_missing_aggregation_in_python_is_named():
    from rpdi.usermodels.base import BrowsingModel, geometric

    class NoAggregation(BrowsingModel):
        def step(self, state, at):
            return geometric(0.5, at.gain)

    with pytest.raises(InputError, match="^NoAggregation: class attribute aggregation is missing"):
        model_for(NoAggregation)


GAINS = "\n    def gains(self, grade, view):\n        return {}\n"
N_STATES = "\n    def n_states(self, view):\n        return {}\n"
INITIAL = ("\n    def initial(self, view):\n        return {}\n")


@pytest.mark.parametrize("attrs, step, what", [
    (GAINS.format("np.zeros(3)"), "pass", "Own.gains returned an array of shape (3,), not the grades' shape"),
    (GAINS.format("grade.astype(str)"), "pass", "Own.gains returned an array of <U32, not numbers"),
    (GAINS.format("None"), "pass", "Own.gains returned None, not numbers"),
    ("", "return None", "Own.step returned None, not a list of Branch"),
    ("", "return geometric(0.5, at.gain)[0]", "Own.step returned a Branch, not a list of Branch"),
    ("", "return geometric(np.full(7, 0.5), at.gain)",
     "Own.step returned branch 0 with prob of shape (7,), which does not broadcast to the users' shape"),
    ("", "return [Branch(1.0, 'a lot', False)]", "Own.step returned branch 0 with gain a str, not numbers"),
    (N_STATES.format("0"), "pass", "Own.n_states returned 0, not a whole number >= 1"),
    (N_STATES.format("2.0"), "pass", "Own.n_states returned 2.0, not a whole number >= 1"),
    (INITIAL.format("np.ones(2)"), "pass", "Own.initial returned an array of shape (2,), not (runs, topics, n_states)"),
])
def test_what_a_models_methods_return_is_checked(tmp_path, run_cli, attrs, step, what):
    """Before: a ``gains()`` of the wrong shape ended with "internal error: ValueError: operands
    could not be broadcast ...", status 1."""
    path, files = _own(tmp_path, attrs=attrs, step=step)
    _reported(run_cli, path, files, what)
