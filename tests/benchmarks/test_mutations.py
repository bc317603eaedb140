"""tests/benchmarks/mutations.py's reading of a run: a planted bug counts as caught only when the
verdict.json the run wrote names a failing cell; an internal error (also exit 1), a crash or a
missing verdict is an error, never a catch."""

from __future__ import annotations

import json

CELL = {"kind": "mean", "run": "r", "topic": "all", "measure": "RBP(p=0.8)", "engine": "vector", "z": 9.0}


def test_a_catch_needs_a_verdict_naming_a_failing_cell(mutations_benchmark):
    outcome = mutations_benchmark.outcome
    disagree = {"status": 1, "failures": [CELL], "marginal": []}
    label, why = outcome(1, disagree, "")
    assert label == "disagree" and "mean: run r, topic all, RBP(p=0.8), vector engine" in why
    agree = {"status": 0, "failures": [], "marginal": [CELL, CELL]}
    assert outcome(0, agree, "") == ("agree", "2 marginal cells, first: "
                                     "mean: run r, topic all, RBP(p=0.8), vector engine")


def test_an_internal_error_is_not_a_catch(mutations_benchmark):
    outcome = mutations_benchmark.outcome
    internal = "rpdi run: internal error: NameError: name 'x' is not defined\n"
    assert outcome(1, None, internal) == ("error", "exit 1, no verdict written: " + internal.strip())
    # an error after the verdict was written (a plot that fails) is still an error
    disagree = {"status": 1, "failures": [CELL], "marginal": []}
    assert outcome(1, disagree, internal)[0] == "error"
    # a crash outside the command's own handling: the exception's line
    crash = "Traceback (most recent call last):\n  File ...\nSyntaxError: invalid syntax\n"
    assert outcome(1, None, crash) == ("error", "exit 1, no verdict written: SyntaxError: invalid syntax")
    assert outcome(2, None, "rpdi run: bad input\n")[0] == "error"
    # exit statuses the verdict does not explain
    assert outcome(1, {"status": 0, "failures": [], "marginal": []}, "")[0] == "error"
    assert outcome(1, {"status": 1, "failures": [], "marginal": []}, "")[0] == "error"
    assert outcome(0, disagree, "")[0] == "error"


def test_the_verdict_is_read_from_the_file_the_run_wrote(mutations_benchmark, tmp_path):
    path = tmp_path / "verdict.json"
    assert mutations_benchmark.read_verdict(str(path)) is None
    path.write_text('{"status": 1, "fail')  # cut short
    assert mutations_benchmark.read_verdict(str(path)) is None
    verdict = {"status": 1, "alpha": 0.01, "counts": {}, "failures": [CELL], "marginal": []}
    path.write_text(json.dumps(verdict, indent=1))
    assert mutations_benchmark.read_verdict(str(path)) == verdict
