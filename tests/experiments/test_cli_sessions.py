"""rpdi eval, simulate and compare with session measures: per-session values against
metrics.sessions.session_score on a hand-built collection, --sessions FILE against the CAsT ids,
and bad input in one line (exit 2)."""

import json

import numpy as np
import pytest

from rpdi.metrics.evaluate import load_qrels, load_runs
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.sessions import Sessions, session_score

SRBP = "sRBP(p=0.8,b=0.6)@3"
SDCG = "sDCG(bq=4)@3"


@pytest.fixture
def collection(tmp_path):
    """Two conversations (7: turns 1, 2, 3; 8: turns 1, 2) and two runs, CAsT-style ids; the
    same topics renamed (x1, ...) with a session file naming the same conversations."""
    qrels = {"7_1": {"d1": 2, "d2": 0, "d3": 1}, "7_2": {"d4": 1, "d5": 3}, "7_3": {"d6": 1},
             "8_1": {"d7": 1}, "8_2": {"d8": 2, "d9": 1}}
    runs = {"A": {"7_1": ["d2", "d1", "d3"], "7_2": ["d5", "dx", "d4"], "7_3": ["dy", "d6"],
                  "8_1": ["d7", "d8"], "8_2": ["d9", "d8"]},
            "B": {"7_1": ["d1", "d3"], "7_2": ["d4"], "7_3": ["d6", "dz", "d2"],
                  "8_1": ["dq", "d7", "d1"], "8_2": ["d8"]}}
    rename = {t: "x" + t.replace("_", "") for t in qrels}
    out = {}
    for tag, name in (("cast", lambda t: t), ("file", rename.get)):
        (tmp_path / tag).mkdir()
        q = tmp_path / tag / "qrels"
        q.write_text("".join(f"{name(t)} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
        paths = []
        for run, topics in runs.items():
            p = tmp_path / tag / run
            p.write_text("".join(f"{name(t)} Q0 {d} {i} {10 - i} {run}\n"
                                 for t, docs in topics.items() for i, d in enumerate(docs)))
            paths.append(p)
        out[tag] = (q, paths)
    sessions = tmp_path / "sessions.txt"
    sessions.write_text("# session position topic\n" + "".join(
        f"{t.split('_')[0]} {t.split('_')[1]} {rename[t]}\n" for t in reversed(list(qrels))))
    return out, sessions


def expected(q, paths, measure, sessions):
    rankings = build_rankings(load_qrels(str(q)), load_runs([str(p) for p in paths]))
    return session_score(parse_measure(measure), rankings, sessions).value


def test_eval_per_session_values_are_session_scores(run_cli, collection):
    files, sessions = collection
    q, paths = files["cast"]
    truth = Sessions(("7", "8"), (("7_1", "7_2", "7_3"), ("8_1", "8_2")))
    status, out, err = run_cli(["eval", q, *paths, "-m", SRBP, "-m", SDCG, "--per-topic", "--format", "json"])
    assert status == 0, err
    rows = json.loads(out)
    for measure in (SRBP, SDCG):
        value = expected(q, paths, measure, truth)
        got = {(r["run"], r["topic"]): r["value"] for r in rows if r["measure"] == measure}
        for s, run in enumerate("AB"):
            assert [got[run, t] for t in ("7", "8")] == pytest.approx(value[s], abs=1e-12)
            assert got[run, "all"] == pytest.approx(value[s].mean(), abs=1e-12)
    assert {r["topic"] for r in rows} == {"7", "8", "all"}


def test_eval_session_file_equals_cast_ids(run_cli, collection):
    files, sessions = collection
    runs = []
    for tag, extra in (("cast", []), ("file", ["--sessions", sessions])):
        q, paths = files[tag]
        status, out, err = run_cli(["eval", q, *paths, "-m", SRBP, "--per-topic", "--format", "csv", *extra])
        assert status == 0, err
        runs.append(sorted(out.splitlines()))  # sessions in the order first met: the file's is 8, 7
    assert runs[0] == runs[1] and len(runs[0]) == 1 + 2 * 3


@pytest.mark.parametrize("argv, message", [
    (["-m", SRBP, "-m", "P@3"], "single-query measures in separate calls"),
    (["-m", SRBP, "--format", "trec"], "trec_eval has none"),
    (["-m", "P@3", "--sessions", "SESSIONS"], "no session measure"),
    (["-m", SRBP, "--ties", "expected"], "not with session measures"),
])
def test_eval_refuses_in_one_line(run_cli, collection, argv, message):
    files, sessions = collection
    q, paths = files["cast"]
    status, out, err = run_cli(["eval", q, *paths, *[str(sessions) if a == "SESSIONS" else a for a in argv]])
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err


def test_eval_refuses_unknown_topics_and_non_cast_ids(run_cli, collection, tmp_path):
    files, sessions = collection
    q, paths = files["file"]
    status, _, err = run_cli(["eval", q, *paths, "-m", SRBP])  # x71, ...: no CAsT ids, no --sessions
    assert status == 2 and err.count("\n") == 1 and "not a conversation's turn" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("7 1 x71\n7 2 x72\n7 3 typo\n")
    status, _, err = run_cli(["eval", q, *paths, "-m", SRBP, "--sessions", bad])
    assert status == 2 and err.count("\n") == 1 and "'typo' is in neither the qrels nor a run" in err


def test_simulate_per_session_against_session_score(run_cli, collection):
    files, sessions = collection
    truth = Sessions(("7", "8"), (("7_1", "7_2", "7_3"), ("8_1", "8_2")))
    q, paths = files["cast"]
    value = expected(q, paths, SRBP, truth)
    outs = []
    for tag, extra in (("cast", []), ("file", ["--sessions", sessions])):
        q, paths = files[tag]
        status, out, err = run_cli(["simulate", q, *paths, "-m", SRBP, "--users", "500", "--per-topic",
                                    "--format", "json", *extra])
        assert status == 0, err  # the verdict agrees
        rows = json.loads(out)
        for s, run in enumerate("AB"):
            got = {r["topic"]: r for r in rows if r["run"] == run}
            for t, session in enumerate(("7", "8")):
                assert got[session]["closed_form"] == pytest.approx(value[s, t], abs=1e-12)
                assert got[session]["exact"] == pytest.approx(value[s, t], abs=1e-12)
            assert got["all"]["exact"] == pytest.approx(value[s].mean(), abs=1e-12)
        outs.append(sorted(json.dumps(r, sort_keys=True) for r in rows))
    assert outs[0] == outs[1]  # the same sessions from the file, the same users on the same streams


def test_simulate_refuses_in_one_line(run_cli, collection, tmp_path):
    files, sessions = collection
    q, paths = files["cast"]
    status, out, err = run_cli(["simulate", q, *paths, "-m", SRBP, "-m", "RBP", "--users", "10"])
    assert status == 2 and out == "" and err.count("\n") == 1 and "separate calls" in err
    q, paths = files["file"]
    bad = tmp_path / "bad.txt"
    bad.write_text("7 1 x71\n7 2 nowhere\n")
    status, out, err = run_cli(["simulate", q, *paths, "-m", SRBP, "--users", "10", "--sessions", bad])
    assert status == 2 and out == "" and err.count("\n") == 1 and "'nowhere' is in neither" in err


def test_compare_over_sessions_is_a_paired_t_test_of_session_scores(run_cli, collection):
    from scipy.stats import ttest_rel

    files, sessions = collection
    truth = Sessions(("7", "8"), (("7_1", "7_2", "7_3"), ("8_1", "8_2")))
    for measure in (SRBP, SDCG):
        value = expected(*files["cast"], measure, truth)
        q, paths = files["file"]
        status, out, err = run_cli(["compare", q, *paths, "-m", measure, "--test", "t", "--format", "json",
                                    "--sessions", sessions])
        assert status == 0, err
        (row,) = json.loads(out)
        assert (row["run_a"], row["run_b"], row["sessions"]) == ("A", "B", 2)  # each session one observation
        assert "topics" not in row
        assert (row["mean_a"], row["mean_b"]) == pytest.approx(value.mean(1), abs=1e-12)
        assert row["p"] == pytest.approx(ttest_rel(value[1], value[0]).pvalue, rel=1e-9)


def test_compare_says_sessions_where_the_observations_are_sessions(run_cli, collection):
    """The table, CSV and JSON count sessions, and the users' preference is per session."""
    files, _ = collection
    q, paths = files["cast"]
    status, out, err = run_cli(["compare", q, *paths, "-m", SDCG, "--test", "t", "--users", "0"])
    assert status == 0, err
    assert "(adjusted p <= 0.05); 2 sessions" in out and " topics" not in out
    assert "a user of A on the same session (ties half; 0.5 = no difference), mean over sessions" in out
    status, out, err = run_cli(["compare", q, *paths, "-m", SDCG, "--test", "t", "--format", "csv"])
    assert status == 0, err
    header, row = out.splitlines()
    assert header.split(",")[-2:] == ["sessions", "method"] and row.split(",")[-2:] == ["2", "closed_form"]
    status, out, err = run_cli(["compare", q, *paths, "-m", "nDCG@3", "--test", "t"])
    assert status == 0 and "; 5 topics" in out  # single-query measures: topics, as before


def test_compare_refuses_in_one_line(run_cli, collection):
    files, sessions = collection
    q, paths = files["cast"]
    status, out, err = run_cli(["compare", q, *paths, "-m", SDCG, "-m", "nDCG@3"])
    assert status == 2 and out == "" and err.count("\n") == 1 and "separate calls" in err
    status, out, err = run_cli(["compare", q, *paths, "-m", "nDCG@3", "--sessions", sessions])
    assert status == 2 and out == "" and err.count("\n") == 1 and "no session measure" in err


def test_eval_a_session_user_of_ones_own(run_cli, collection):
    """The Conversation user by module (no closed form): rpdi eval gives its exact expectation
    on the sessions laid out at its cutoff, the same as the model's own exact evaluation."""
    from rpdi.metrics.sessions import session_rankings
    from rpdi.usermodels import exact
    from rpdi.usermodels.conversation import Conversation

    files, _ = collection
    q, paths = files["cast"]
    rankings = build_rankings(load_qrels(str(q)), load_runs([str(p) for p in paths]))
    laid = session_rankings(rankings, Sessions(("7", "8"), (("7_1", "7_2", "7_3"), ("8_1", "8_2"))), 3)
    value = exact(Conversation(p=0.7, cutoff=3), laid, "unknown").value
    assert np.ptp(value) > 0  # the sessions and runs differ for this user
    status, out, err = run_cli(["eval", q, *paths, "-m", "rpdi.usermodels.conversation:Conversation(p=0.7)@3",
                                "--per-topic", "--format", "json"])
    assert status == 0, err
    got = {(r["run"], r["topic"]): r["value"] for r in json.loads(out)}
    assert [[got[run, t] for t in ("7", "8")] for run in "AB"] == pytest.approx(value, abs=1e-12)
