"""Experiment configs with session measures (experiments/config.py ``data.sessions``,
experiments/tasks.py, the report and ``[compare]`` over sessions): the shipped CAsT 2021 config
end to end, small, and every mistake in one line naming the key."""

from __future__ import annotations

import csv
import json
import os
from importlib import resources

import pytest

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.experiments.compare import compare
from rpdi.metrics.evaluate import evaluate
from rpdi.usermodels import resolve

SHIPPED = resources.files("rpdi.experiments") / "configs" / "cast2021_sessions.toml"
RUNS = ("org_manual_bm25", "org_convdr", "org_manual_ance_bert")


@pytest.fixture(scope="module")
def cast_run(tmp_path_factory):
    """The shipped config on three of the five runs with 150 users per (run, session, measure),
    comparing also the users' exact preference."""
    from rpdi.experiments.cli import main

    tmp = tmp_path_factory.mktemp("cast")
    text = SHIPPED.read_text()
    assert 'sessions = "cast"' in text and "users = 2000" in text
    runs = [r for r in cast2021_runs() if os.path.basename(r).split(".")[0] in RUNS]
    text = (text.replace("users = 2000", "users = 150")
            .replace('"../data/cast2021/qrels.txt.gz"', json.dumps(CAST2021_QRELS))
            .replace('["../data/cast2021/runs/*.run.gz"]', json.dumps(runs))
            .replace("plots = true", "plots = false")
            .replace('baseline = "org_manual_bm25"', 'baseline = "org_manual_bm25"\nusers = 0'))
    config = tmp / "cast.toml"
    config.write_text(text)
    status = main(["run", str(config), "--out", str(tmp / "out")])
    return status, tmp / "out", runs


def _measures(out) -> list[str]:
    with open(out / "results.csv") as f:
        return list(dict.fromkeys(r["measure"] for r in csv.DictReader(f)))


def test_the_cast_config_agrees_and_its_values_are_rpdi_eval_s_per_session(cast_run):
    status, out, runs = cast_run
    assert status == 0
    measures = _measures(out)
    assert len(measures) == 4 and measures[-1].startswith("rpdi.usermodels.conversation:Conversation")
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    got = {(r["run"], r["topic"], r["measure"]): float(r["closed_form"] or r["exact"]) for r in rows}
    want = evaluate(CAST2021_QRELS, runs, [resolve(m) for m in measures], per_topic=True)
    assert {r["topic"] for r in want if r["topic"] != "all"} == {t for _, t, _ in got if t != "all"}
    assert len({t for _, t, _ in got}) == 19 + 1  # the 19 judged conversations, and their mean
    for r in want:
        assert got[r["run"], r["topic"], r["measure"]] == pytest.approx(r["value"], rel=1e-12, abs=1e-15), r
    summary = (out / "summary.md").read_text()
    assert "## Means over sessions" in summary and "users per (run, session, measure)" in summary
    assert "topic: a session (19 sessions, from the CAsT ids SESSION_TURN" in summary
    assert "All are means over sessions" in summary and "over its (run, session) cells" in summary
    assert "verdict: AGREE" in summary


def test_the_config_s_comparison_is_rpdi_compare_s_over_sessions(cast_run):
    _, out, runs = cast_run
    measures = _measures(out)
    with open(out / "compare.json") as f:
        pairs = json.load(f)
    theirs = compare(CAST2021_QRELS, runs, [resolve(m) for m in measures], baseline="org_manual_bm25", seed=2021,
                     users=0)
    assert len(pairs) == len(theirs) == 2 * len(measures)
    for mine, other in zip(pairs, theirs):
        assert mine["sessions"] == other["sessions"] == 19 and "topics" not in mine
        for key in ("run_a", "run_b", "p", "p_adjusted", "significant"):
            assert mine[key] == other[key], key
        assert mine["diff"] == pytest.approx(other["diff"], rel=1e-12)
        assert mine["user_b_better"] == pytest.approx(other["user_b_better"], rel=1e-12)
    with open(out / "compare.csv") as f:
        assert "sessions" in next(csv.reader(f))
    summary = (out / "summary.md").read_text()
    assert "(adjusted p <= 0.05); 19 sessions" in summary and "on the same session" in summary


CONFIG = """\
[experiment]
name = "s"
users = 50

[data]
qrels = "qrels.txt"
runs = ["*.run"]
{data}
[[measures]]
name = "{measure}"
{more}"""

QRELS = "1_1 0 d1 1\n1_1 0 d2 0\n1_2 0 d3 2\n2_1 0 d1 1\n2_2 0 d4 1\n"
RUN_A = "1_1 Q0 d1 1 3 a\n1_2 Q0 d3 1 2 a\n2_1 Q0 d2 1 2 a\n2_2 Q0 d4 1 1 a\n"
RUN_B = "1_1 Q0 d2 1 3 b\n1_2 Q0 d1 1 2 b\n2_1 Q0 d1 1 2 b\n2_2 Q0 d9 1 1 b\n"

MISTAKES = {  # name: (data lines, measure, more, what the one line must say)
    "session measure without sessions": ("", "sRBP", "",
                                         "data.sessions: missing: the session measures ('sRBP') read sessions"),
    "sessions without a session measure": ('sessions = "cast"\n', "AP", "",
                                           "data.sessions: given, but no session measure"),
    "misspelt key": ('session = "cast"\n', "sRBP", "", "data.session: unknown key; did you mean 'sessions'?"),
    "missing session file": ('sessions = "none.txt"\n', "sRBP", "", "data.sessions: no such file"),
    "malformed session file": ('sessions = "bad.txt"\n', "sRBP", "",
                               "data.sessions: " + "{dir}/bad.txt:2: expected 'session position topic'"),
    "session file's unknown topic": ('sessions = "unknown.txt"\n', "sRBP", "",
                                     "data.sessions: {dir}/unknown.txt: topic '9_1' is in neither the qrels nor a run"),
    "not CAsT ids": ('sessions = "cast"\n', "sRBP", "", "data.sessions: topic 'x': not a conversation's turn"),
    "mixed with a single-query measure": ('sessions = "cast"\n', "sRBP", '\n[[measures]]\nname = "AP"\n',
                                          "measures: 'AP' reads one query, 'sRBP' a session"),
    "tie orders": ('sessions = "cast"\n', "sDCG@2", '\n[compare]\nties = "expected"\n',
                   "compare.ties: not with session measures ('sDCG@2') yet"),
    "residual depths": ('sessions = "cast"\n', "sDCG", '\n[analysis]\nresidual_depths = [1, 2]\n',
                        "analysis.residual_depths: not with session measures ('sDCG') yet"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_a_session_config_mistake_is_one_line_naming_the_key(mistake, tmp_path, run_cli):
    data, measure, more, says = MISTAKES[mistake]
    qrels = QRELS + ("x 0 d1 1\n" if mistake == "not CAsT ids" else "")
    for name, text in (("qrels.txt", qrels), ("a.run", RUN_A), ("b.run", RUN_B), ("bad.txt", "s 1 1_1\ns 2\n"),
                       ("unknown.txt", "s 1 1_1\ns 2 9_1\n")):
        (tmp_path / name).write_text(text)
    config = tmp_path / "s.toml"
    config.write_text(CONFIG.format(data=data, measure=measure, more=more))
    status, out, err = run_cli(["run", config, "--out", tmp_path / "out"])
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("rpdi run: ") and says.format(dir=tmp_path) in err, err
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")


@pytest.mark.parametrize("toml,says", [
    ('[data]\nsessions = "cast"\n\n[data.synthetic]\ntopics = 3\n', "data: Value error, sessions: read with qrels and runs, not with [data.synthetic]"),
    ('[data.synthetic]\ntopics = 3\n', "measures: the session measures read the sessions of qrels and runs"),
])
def test_sessions_are_not_read_of_a_synthetic_collection(tmp_path, run_cli, toml, says):
    config = tmp_path / "s.toml"
    config.write_text(f'[experiment]\nname = "s"\n\n{toml}\n[[measures]]\nname = "sRBP"\n')
    status, out, err = run_cli(["run", config, "--out", tmp_path / "out"])
    assert status == 2 and out == "" and err.count("\n") == 1 and says in err, err
