"""Sessions: the session file, CAsT's ids, and the turns' rankings laid end to end, against a
plain join written here from the qrels and runs as dicts."""

from __future__ import annotations

import os

import numpy as np
import pytest

from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import load_qrels, load_runs
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.sessions import (Sessions, read_sessions, session_means, session_rankings, sessions_from_ids)


def test_session_file(tmp_path, write):
    path = write(tmp_path / "s.txt", "# session position topic\n\nb 1 t3  # the first turn of b\n"
                                     "a 3 t2\na 1 t1\n")
    assert read_sessions(path) == Sessions(("b", "a"), (("t3",), ("t1", None, "t2")))


@pytest.mark.parametrize("text, line, what", [
    ("a 1 t1\na 1\n", 2, "expected 'session position topic', got 2 field(s)"),
    ("a 1 t1 x\n", 1, "got 4 field(s)"),
    ("a 0 t1\n", 1, "position '0' is not a whole number >= 1"),
    ("a one t1\n", 1, "position 'one' is not a whole number >= 1"),
    ("a 1 t1\n# c\na 1 t2\n", 3, "session 'a' has two turns at position 1"),
    ("a 1 t1\nb 1 t1\n", 2, "topic 't1' is already a turn"),
])
def test_bad_session_lines_name_file_and_line(tmp_path, write, text, line, what):
    path = write(tmp_path / "s.txt", text)
    with pytest.raises(InputError) as e:
        read_sessions(path)
    assert str(e.value).startswith(f"{path}:{line}: ") and what in str(e.value)
    assert "\n" not in str(e.value)


def test_empty_or_missing_session_file(tmp_path, write):
    with pytest.raises(InputError, match="no session in the file"):
        read_sessions(write(tmp_path / "s.txt", "# nothing\n"))
    with pytest.raises(InputError, match="cannot read the session file"):
        read_sessions(tmp_path / "absent.txt")


def test_cast_ids():
    assert sessions_from_ids(["9_2", "10_1", "9_1"]) == Sessions(("9", "10"), (("9_1", "9_2"), ("10_1",)))
    for bad in (["106"], ["106_0"], ["106_x"]):
        with pytest.raises(InputError, match="not a conversation's turn"):
            sessions_from_ids(bad)


def _collection(tmp_path, write_trec, seed):
    """Qrels and two runs over three sessions: turns the qrels do not judge (x_2, y_1's
    position 2 absent), a turn a run does not answer, rankings of every length."""
    rng = np.random.default_rng(seed)
    turns = ["x_1", "x_2", "x_3", "y_1", "y_3", "z_1"]
    qrels, runs = {}, {"r0": {}, "r1": {}}
    for t in turns:
        docs = [f"{t}-d{i}" for i in range(int(rng.integers(1, 9)))]
        if t != "x_2":  # judged by nobody
            qrels[t] = {d: int(rng.integers(0, 4)) for d in docs if rng.random() < 0.8} or {docs[0]: 1}
        for name, run in runs.items():
            if (name, t) == ("r1", "y_3"):
                continue  # not answered
            n = int(rng.integers(1, len(docs) + 1))
            run[t] = {d: float(rng.integers(0, 3)) for d in rng.choice(docs, n, replace=False)}
    q, r = write_trec(str(tmp_path), qrels, runs)
    return qrels, runs, build_rankings(load_qrels(q), load_runs(r))


def _plain(qrels, runs, sessions, width):
    """grade, judged by (run, session, turn, rank) from the dicts: trec_eval's order (score,
    then docno, both descending), each turn cut to width; unknown ranks unjudged."""
    S, Q = len(runs), max(len(t) for t in sessions.turns)
    grade = np.zeros((S, len(sessions.ids), Q, width))
    judged = np.zeros(grade.shape, bool)
    for s, run in enumerate(runs.values()):
        for x, turns in enumerate(sessions.turns):
            for q, topic in enumerate(turns):
                if topic not in qrels:
                    continue
                ranked = sorted(run.get(topic, {}).items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)
                for i, (doc, _) in enumerate(ranked[:width]):
                    if doc in qrels[topic]:
                        grade[s, x, q, i], judged[s, x, q, i] = max(qrels[topic][doc], 0), True
    return grade, judged


@pytest.mark.parametrize("seed, width", [(1, 3), (2, 8), (3, 12)])
def test_laid_out_rankings_equal_a_plain_join(tmp_path, write_trec, seed, width):
    qrels, runs, rankings = _collection(tmp_path, write_trec, seed)
    sessions = sessions_from_ids(["x_1", "x_2", "x_3", "y_1", "y_3", "z_1"])
    laid = session_rankings(rankings, sessions, width)
    grade, judged = _plain(qrels, runs, sessions, width)
    np.testing.assert_array_equal(laid.grid(laid.grade), grade)
    np.testing.assert_array_equal(laid.grid(laid.judged), judged)
    assert laid.turns.tolist() == [3, 3, 1] and laid.width == width
    assert laid.length.tolist() == [[3 * width, 3 * width, width]] * 2
    assert list(laid.topics) == ["x", "y", "z"] and laid.runs == ("r0", "r1")
    assert laid.turn_topics[1].tolist() == ["y_1", "", "y_3"]


def test_sessions_take_part_where_a_judged_turn_was_answered(tmp_path, write_trec):
    _, _, rankings = _collection(tmp_path, write_trec, 4)
    sessions = Sessions(("only-x2", "y"), (("x_2",), ("y_3",)))  # x_2 judged by nobody; r1 did not answer y_3
    laid = session_rankings(rankings, sessions, 5)
    assert laid.present.tolist() == [[False, True], [False, False]]
    assert not laid.judged.any(axis=-1)[:, 0].any()  # nothing of x_2 is known
    means = session_means(np.array([[np.nan, 0.5], [1.0, 2.0]]), laid.present)
    assert means[0] == 0.5 and np.isnan(means[1])


def test_bundled_cast_conversations():
    from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs

    qrels, runs = load_qrels(CAST2021_QRELS), load_runs(cast2021_runs())
    rankings = build_rankings(qrels, runs)
    sessions = sessions_from_ids(rankings.topics)
    laid = session_rankings(rankings, sessions, 10)
    assert laid.grade.shape == (5, len(sessions.ids), laid.turns.max() * 10)
    # every judged turn's top 10 sits in its session at its position: grades taken back by topic
    index = {str(t): i for i, t in enumerate(rankings.topics)}
    for x, turns in enumerate(sessions.turns):
        for q, topic in enumerate(turns):
            got = laid.grid(laid.grade)[:, x, q]
            if topic is None:
                assert not laid.grid(laid.judged)[:, x, q].any()
            else:
                want = rankings.grade[:, index[topic], :10]
                np.testing.assert_array_equal(got[:, :want.shape[-1]], want)
    assert os.path.basename(cast2021_runs()[0]).endswith(".run.gz")
