"""Session users: the exact expectation equals the closed form (value and residual) on synthetic
and CAsT conversations, the turn reached follows from the users, the simulated users agree
through the verdict, and a session user of one's own is checked the same way."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import load_qrels, load_runs
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import Rankings, build_rankings
from rpdi.metrics.sessions import session_rankings, session_score, sessions_from_ids
from rpdi.metrics.view import View
from rpdi.simulate.api import simulate_sessions
from rpdi.usermodels import exact, model_for
from rpdi.usermodels.session import SessionUser, turns_reached

MEASURES = ["sRBP(p=0.8,b=0.6)@6", "sRBP(p=0.9,b=0.3,rel=2)@4", "sRBP(p=0.6,b=1)@3", "sRBP(p=0.7,b=0)@5",
            "sDCG@6", "sDCG(b=3,bq=2)@4", "nsDCG@6", "nsDCG(b=3,bq=2)@4", "esCG@6", "esCG(p_reform=0.5,p_down=0.9)@4",
            "esCG(p_reform=1,p_down=1)@3", "esDCG@6", "esDCG(p_reform=0.5,p_down=0.9,b=3)@4",
            "esDCG(p_reform=1,p_down=1)@3", "esnDCG@6", "esnDCG(p_reform=0.6,p_down=0.4,b=1.5)@4", "esnDCG(p_reform=0,p_down=1)@3"]


def _random(seed, depth=6, pool=5):
    """Rankings of a few sessions' turns whose documents come from a small pool per session, so
    that turns retrieve the same documents again (esCG's read-before logic)."""
    rng = np.random.default_rng(seed)
    topics = [f"{x}_{q}" for x in range(5) for q in range(1, int(rng.integers(1, 6)) + 1) if (x, q) != (1, 2)]
    S, T = 3, len(topics)
    length = rng.integers(0, depth + 1, (S, T))
    inside = np.arange(depth) < length[..., None]
    judged = (rng.random((S, T, depth)) < 0.8) & inside
    grade = np.where(judged, rng.integers(0, 4, (S, T, depth)), 0).astype(float)
    session = np.array([int(t.split("_")[0]) for t in topics])
    doc = np.where(inside, session[None, :, None] * pool + rng.integers(0, pool, (S, T, depth)), -1)
    r = Rankings.of_grades(grade, np.full((T, 1), 3.0), [1] * T, 3.0, judged=judged, length=length,
                           topics=np.array(topics, dtype=object))
    return replace(r, doc=doc)


@pytest.fixture(scope="module")
def cast():
    qrels, runs = load_qrels(CAST2021_QRELS), load_runs(cast2021_runs())
    rankings = build_rankings(qrels, runs)
    return rankings, sessions_from_ids(rankings.topics)


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("name", MEASURES)
def test_exact_equals_closed_form(seed, name):
    rankings = _random(seed)
    measure = parse_measure(name)
    laid = session_rankings(rankings, sessions_from_ids(rankings.topics), measure.cutoff)
    closed = measure.compute(View(laid))
    expected = exact(model_for(measure), laid)
    np.testing.assert_allclose(expected.value, closed.value, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(expected.residual, closed.residual, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["sRBP(p=0.8,b=0.6)@10", "sDCG(bq=4)@10", "sRBP(p=0.95,b=0.5)@50", "nsDCG@10",
                                  "esCG@10", "esCG(p_reform=0.9,p_down=0.9)@30"])
def test_exact_equals_closed_form_on_cast(cast, name):
    rankings, sessions = cast
    measure = parse_measure(name)
    closed = session_score(measure, rankings, sessions)
    expected = exact(model_for(measure), session_rankings(rankings, sessions, measure.cutoff))
    np.testing.assert_allclose(expected.value, closed.value, rtol=1e-12)
    np.testing.assert_allclose(expected.residual, closed.residual, rtol=1e-12, atol=1e-14)


def test_time_counts_the_documents_read():
    """The cost (time) of sRBP's user: every document read takes one unit, those passed over
    none; the documents read are E = sum over turns and ranks of the reach probabilities."""
    rankings = _random(5)
    laid = session_rankings(rankings, sessions_from_ids(rankings.topics), 4)
    p, b = 0.8, 0.6
    x = p * (1 - b) / (1 - b * p)
    reads = [sum(x ** q * (b * p) ** i for q in range(n) for i in range(4)) for n in laid.turns]
    got = exact(model_for("sRBP(p=0.8,b=0.6)@4"), laid).values["cost"]
    np.testing.assert_allclose(got, np.broadcast_to(reads, got.shape), rtol=1e-12)


def test_turn_reached_follows_the_users():
    """sRBP's user moves on from a turn with probability x = p(1-b)/(1-bp) whatever it read:
    the last turn read is q with probability x^(q-1)(1 - x), the last of n turns x^(n-1)."""
    rankings = _random(6)
    laid = session_rankings(rankings, sessions_from_ids(rankings.topics), 5)
    p, b = 0.85, 0.4
    x = p * (1 - b) / (1 - b * p)
    got = turns_reached(model_for("sRBP(p=0.85,b=0.4)@5"), laid)
    for j, n in enumerate(laid.turns):
        want = [x ** q * (1 - x) for q in range(n - 1)] + [x ** (n - 1)] + [0.0] * (got.shape[-1] - n)
        np.testing.assert_allclose(got[:, j], np.broadcast_to(want, got[:, j].shape), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("engine, users", [("vector", 4000), ("agent", 300)])
def test_simulated_users_agree(tmp_path, write_trec, engine, users):
    rng = np.random.default_rng(11)
    qrels, runs = {}, {"a": {}, "b": {}}
    for x in range(4):
        for q in range(1, int(rng.integers(2, 5))):
            t, docs = f"{x}_{q}", [f"{x}_{q}-{i}" for i in range(8)]
            qrels[t] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.7}
            for run in runs.values():
                run[t] = {d: float(rng.random()) for d in rng.choice(docs, int(rng.integers(1, 9)), replace=False)}
    q, r = write_trec(str(tmp_path), qrels, runs)
    records, verdict = simulate_sessions(q, r, ["sRBP(p=0.8,b=0.6)@5", "sDCG(bq=2)@5"], users=users, seed=3,
                                         engine=engine, with_verdict=True, per_topic=True)
    assert verdict.status == 0, verdict.failures
    assert verdict.counts["closed_vs_exact"] == 2 * 2 * 4 and verdict.counts["mean"] > 0
    assert {rec["topic"] for rec in records} == {"0", "1", "2", "3", "all"}


def test_simulated_users_agree_on_cast():
    records, verdict = simulate_sessions(CAST2021_QRELS, cast2021_runs()[:2], ["sRBP(p=0.8,b=0.6)@10", "sDCG@10"],
                                         users=2000, seed=5, with_verdict=True)
    assert verdict.status == 0, verdict.failures
    assert verdict.counts["closed_vs_exact"] > 0 and len(records) == 4


def _shared_documents(tmp_path, write_trec, seed):
    """A small collection whose turns retrieve the documents of their session's pool, so that a
    session's turns retrieve the same documents again; each turn its own qrels."""
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {"a": {}, "b": {}}
    for x in range(4):
        pool = [f"{x}-{i}" for i in range(7)]
        for q in range(1, int(rng.integers(2, 5))):
            t = f"{x}_{q}"
            qrels[t] = {d: int(rng.integers(0, 3)) for d in pool if rng.random() < 0.7}
            for run in runs.values():
                run[t] = {d: float(rng.random()) for d in rng.choice(pool, int(rng.integers(1, 6)), replace=False)}
    return write_trec(str(tmp_path), qrels, runs)


@pytest.mark.parametrize("engine, users", [("vector", 4000), ("agent", 300)])
def test_simulated_users_agree_where_documents_come_again(tmp_path, write_trec, engine, users):
    """esCG's and nsDCG's users, on sessions whose turns retrieve the same documents."""
    q, r = _shared_documents(tmp_path, write_trec, 12)
    _, verdict = simulate_sessions(q, r, ["esCG(p_reform=0.7,p_down=0.8)@4", "nsDCG(bq=2)@4"], users=users, seed=4,
                                   engine=engine, with_verdict=True, per_topic=True)
    assert verdict.status == 0, verdict.failures
    assert verdict.counts["closed_vs_exact"] == 2 * 2 * 4 and verdict.counts["mean"] > 0


def test_esndcg_user_undefined_where_the_ideal_gains_nothing():
    """A session whose turns judge nothing relevant has no esnDCG (its ideal DCG is 0): the user
    has no mass there, as the closed form is NaN; the other sessions are defined."""
    rankings = _random(3)
    rankings = replace(rankings, ideal=np.where(np.char.startswith(rankings.topics.astype(str), "2_")[:, None],
                                                0.0, rankings.ideal))
    laid = session_rankings(rankings, sessions_from_ids(rankings.topics), 4)
    measure = parse_measure("esnDCG@4")
    closed, expected = measure.compute(View(laid)), exact(model_for(measure), laid)
    undefined = np.isnan(closed.value)
    assert undefined[:, 2].all() and not undefined[:, [0, 1, 3, 4]].any()
    np.testing.assert_array_equal(np.isnan(expected.value), undefined)
    np.testing.assert_allclose(expected.value[~undefined], closed.value[~undefined], rtol=1e-12)


@pytest.mark.parametrize("engine, users", [("vector", 4000), ("agent", 300)])
def test_path_dcg_users_agree_where_documents_come_again(tmp_path, write_trec, engine, users):
    """esDCG's and esnDCG's users, on sessions whose turns retrieve the same documents."""
    q, r = _shared_documents(tmp_path, write_trec, 13)
    _, verdict = simulate_sessions(q, r, ["esDCG(p_reform=0.7,p_down=0.8)@4", "esnDCG(p_reform=0.9,p_down=0.6,b=3)@4"],
                                   users=users, seed=5, engine=engine, with_verdict=True, per_topic=True)
    assert verdict.status == 0, verdict.failures
    assert verdict.counts["closed_vs_exact"] == 2 * 2 * 4 and verdict.counts["mean"] > 0


def test_path_dcg_users_agree_on_cast():
    """On one run's CAsT conversations; the verdict's closed-vs-exact cells check the users'
    exact value against the closed forms there too (their states are per conversation: slow)."""
    _, verdict = simulate_sessions(CAST2021_QRELS, cast2021_runs()[:1], ["esDCG@10", "esnDCG@10"], users=2000, seed=7,
                                   with_verdict=True)
    assert verdict.status == 0, verdict.failures
    assert verdict.counts["closed_vs_exact"] > 0 and verdict.counts["mean"] > 0


def test_esCG_users_agree_on_cast():
    _, verdict = simulate_sessions(CAST2021_QRELS, cast2021_runs()[:2], ["esCG@10", "nsDCG@10"], users=2000, seed=6,
                                   with_verdict=True)
    assert verdict.status == 0, verdict.failures
    assert verdict.counts["closed_vs_exact"] > 0 and verdict.counts["mean"] > 0


class Patient(SessionUser):
    """A session user of one's own: goes down with probability p, else moves on to the next
    query (at a turn's last rank, for sure); it stops only at the session's end."""

    parameters = {"p": 0.7}
    aggregation = "total"

    def moves(self, turn, rank, at):
        return (self.p, 1 - self.p) if rank < self.width else (0.0, 1.0)


PATIENT_FILE = """
from rpdi.usermodels.session import SessionUser


class Patient(SessionUser):
    parameters = {"p": 0.7}
    aggregation = "total"

    def moves(self, turn, rank, at):
        return (self.p, 1 - self.p) if rank < self.width else (0.0, 1.0)
"""


def test_a_session_user_of_ones_own(tmp_path, write_trec, write):
    """Its exact value is the expected total of gains, here rank i of turn q read with
    probability p^(i-1) (every user reaches every turn: going down or moving on, nobody stops
    before the last turn's last rank or its moving on); its users agree with it."""
    rankings = _random(7)
    laid = session_rankings(rankings, sessions_from_ids(rankings.topics), 4)
    model = model_for(Patient)
    assert model.measure.spec.session
    g = laid.grid(laid.grade) / 3.0
    weights = 0.7 ** np.arange(4)
    exists = np.arange(g.shape[2])[None, :, None] < laid.turns[:, None, None]
    want = (g * weights * exists).sum((-2, -1))
    model = Patient(p=0.7, cutoff=4)
    np.testing.assert_allclose(exact(model, laid).value, want, rtol=1e-12)
    qrels = {f"{x}_{q}": {f"d{x}{q}{i}": i % 3 for i in range(5)} for x in range(3) for q in range(1, 4)}
    runs = {"a": {t: {d: float(i) for i, d in enumerate(docs)} for t, docs in qrels.items()}}
    qpath, rpaths = write_trec(str(tmp_path), qrels, runs)
    _, verdict = simulate_sessions(qpath, rpaths, [model], users=2000, seed=9, with_verdict=True)
    assert verdict.status == 0 and verdict.counts["mean"] > 0
    plugin = write(tmp_path / "patient.py", PATIENT_FILE) + ":Patient(p=0.7)@4"  # by file, as rpdi simulate takes it
    np.testing.assert_allclose(exact(model_for(plugin), laid).value, want, rtol=1e-12)


def test_session_user_needs_sessions():
    with pytest.raises(InputError, match="a session user; give the sessions"):
        exact(model_for("sRBP@3"), _random(0))


def conversation_by_definition(turns, p):
    """The Conversation user's expected total gain and turn reached, enumerated: the user enters
    turn 1; at rank i it reads gain r, is answered with probability r (next turn, or the end
    after the last turn), else reads on with p (at the turn's last rank: gives up)."""
    value, reached = 0.0, np.zeros(len(turns))
    enter = 1.0
    for q, turn in enumerate(turns):
        here, answered = enter, 0.0
        for i, r in enumerate(turn):
            value += here * r
            answered += here * r
            here *= (1 - r) * (p if i + 1 < len(turn) else 0.0)
        reached[q] = enter - (answered if q + 1 < len(turns) else 0.0)
        enter = answered
    return value, reached


def test_conversation_user_against_its_definition():
    from rpdi.usermodels.conversation import Conversation

    rankings = _random(8)
    laid = session_rankings(rankings, sessions_from_ids(rankings.topics), 5)
    model = Conversation(p=0.75, cutoff=5)
    expected = exact(model, laid)
    reached = turns_reached(model, laid)
    gains = laid.grid(laid.grade) / 3.0
    for s in range(gains.shape[0]):
        for x, n in enumerate(laid.turns):
            value, turn = conversation_by_definition(gains[s, x, :n].tolist(), 0.75)
            assert expected.value[s, x] == pytest.approx(value, rel=1e-12)
            np.testing.assert_allclose(reached[s, x, :n], turn, rtol=1e-12, atol=1e-15)
    assert np.ptp(reached[:, 0], axis=0).max() > 0  # systems differ in how far their users get


def test_conversation_users_agree_on_cast():
    from rpdi.usermodels.conversation import Conversation

    _, verdict = simulate_sessions(CAST2021_QRELS, cast2021_runs()[:2], [Conversation(p=0.8, cutoff=10)],
                                   users=2000, seed=8, with_verdict=True)
    assert verdict.status == 0, verdict.failures


def test_per_session_outcome_distributions():
    """The session users are plain browsing models on the laid-out sessions, so rpdi compare's
    outcome distributions (simulate.experience) come per session as they come per topic: each
    distribution's mean is the exact value, and its support the totals a user can gather."""
    from rpdi.simulate.experience import outcome_distributions
    from rpdi.simulate.ranking import rankings_for

    rankings = _random(9)
    laid = session_rankings(rankings, sessions_from_ids(rankings.topics), 3)
    model = model_for("sRBP(p=0.8,b=0.6)@3")
    rows = rankings_for(model, View(laid, model.k), "unknown")
    keys = sorted(rows)
    dists = outcome_distributions(model, [rows[k] for k in keys])
    assert dists is not None
    expected = exact(model, laid)
    for (s, x), (values, mass) in zip(keys, dists):
        assert mass.sum() == pytest.approx(1.0, abs=1e-9)
        assert (values * mass).sum() == pytest.approx(expected.value[s, x], rel=1e-9, abs=1e-12)
