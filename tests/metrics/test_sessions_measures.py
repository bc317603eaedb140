"""sDCG and sRBP: the closed forms against plain re-derivations from the papers' definitions,
written here turn by turn and rank by rank, and against rpdi's single-query measures where a
session of one query is one ranking."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rpdi.metrics.errors import InputError
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.sessions import session_rankings, session_score, sessions_from_ids
from rpdi.metrics.view import View


def _random(seed, session_topics, sessions=4, most_turns=4, depth=7):
    """Rankings of the turns of a few sessions (CAsT ids), grades 0..3, unjudged documents,
    rankings shorter than the depth, an empty one, and a turn position nobody judged."""
    rng = np.random.default_rng(seed)
    topics = session_topics(rng, sessions, most_turns)
    S, T = 2, len(topics)
    grade = rng.integers(0, 4, (S, T, depth)).astype(float)
    judged = rng.random((S, T, depth)) < 0.8
    length = rng.integers(0, depth + 1, (S, T))
    length[0, 0] = 0
    grade = np.where(judged & (np.arange(depth) < length[..., None]), grade, 0.0)
    judged &= np.arange(depth) < length[..., None]
    r = Rankings.of_grades(grade, np.full((T, 1), 3.0), [1] * T, 3.0, judged=judged, length=length,
                           topics=np.array(topics, dtype=object))
    return r, sessions_from_ids(topics)


def _turns(laid, s, x):
    """Session x of run s as a list of turns, each a list of (grade, known) by rank."""
    g, j = laid.grid(laid.grade)[s, x], laid.grid(laid.judged)[s, x]
    return [[(float(g[q, i]), bool(j[q, i])) for i in range(laid.width)] for q in range(int(laid.turns[x]))]


def sdcg_by_definition(turns, b, bq, top):
    """Järvelin et al. 2008: each turn's DCG (gain = grade; no discount before rank b, then
    1/log_b i), the turn's DCG divided by 1 + log_bq q; unknown ranks at ``top`` for the upper end."""
    value = upper = 0.0
    for q, turn in enumerate(turns, start=1):
        query = 1 + math.log(q, bq)
        for i, (g, known) in enumerate(turn, start=1):
            rank = 1.0 if i < b else math.log(i, b)
            value += g / (query * rank)
            upper += (g if known else top) / (query * rank)
    return value, upper - value


def srbp_by_definition(turns, p, b, gain):
    """Lipani et al. 2019: the probability of reading document i of query q is that of reaching
    query q, (p(1 - b)/(1 - b p))^(q-1), times (b p)^(i-1); sRBP is (1 - p) times the expected
    gain; unknown ranks at gain 1 for the upper end."""
    value = upper = 0.0
    for q, turn in enumerate(turns, start=1):
        reach = (p * (1 - b) / (1 - b * p)) ** (q - 1)
        for i, (g, known) in enumerate(turn, start=1):
            w = (1 - p) * reach * (b * p) ** (i - 1)
            value += w * gain(g)
            upper += w * (gain(g) if known else 1.0)
    return value, upper - value


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name, oracle", [
    ("sDCG@5", lambda t: sdcg_by_definition(t, 2, 4, 3.0)),
    ("sDCG(b=3,bq=2)@7", lambda t: sdcg_by_definition(t, 3, 2, 3.0)),
    ("sRBP(p=0.8,b=0.6)@5", lambda t: srbp_by_definition(t, 0.8, 0.6, lambda g: g / 3)),
    ("sRBP(p=0.95,b=0.2,rel=2)@7", lambda t: srbp_by_definition(t, 0.95, 0.2, lambda g: float(g >= 2))),
    ("sRBP(p=0.5,b=1)@3", lambda t: srbp_by_definition(t, 0.5, 1.0, lambda g: g / 3)),
])
def test_closed_forms_equal_the_papers_definitions(seed, name, oracle, session_topics):
    rankings, sessions = _random(seed, session_topics)
    measure = parse_measure(name)
    score = session_score(measure, rankings, sessions)
    laid = session_rankings(rankings, sessions, measure.cutoff)
    for s in range(2):
        for x in range(len(sessions.ids)):
            value, residual = oracle(_turns(laid, s, x))
            assert score.value[s, x] == pytest.approx(value, rel=1e-12, abs=1e-15)
            assert score.residual[s, x] == pytest.approx(residual, rel=1e-12, abs=1e-15)


def test_one_query_sessions_are_single_query_measures(session_topics):
    """A session of one query: sRBP with b = 1 is RBP@k, sDCG is DCG(b=2)@k (Järvelin &
    Kekäläinen's discount), each rpdi's own closed form on the turn's ranking."""
    rankings, _ = _random(5, session_topics)
    single = sessions_from_ids([f"{i}_1" for i in range(len(rankings.topics))])
    renamed = Rankings.of_grades(rankings.grade, rankings.ideal, rankings.n_judged, rankings.max_grade,
                                 judged=rankings.judged, length=rankings.length,
                                 topics=np.array([f"{i}_1" for i in range(len(rankings.topics))], dtype=object))
    for session, plain in [("sRBP(p=0.7,b=1)@5", "RBP(p=0.7)@5"), ("sDCG(bq=3)@6", "DCG(b=2)@6")]:
        got = session_score(parse_measure(session), renamed, single)
        want = parse_measure(plain).compute(View(renamed, 5 if "RBP" in plain else 6))
        np.testing.assert_allclose(got.value, want.value, rtol=1e-12)


def test_session_measure_needs_sessions(session_topics):
    rankings, sessions = _random(0, session_topics)
    with pytest.raises(InputError, match="a session measure; give the sessions"):
        parse_measure("sRBP@5").compute(View(rankings))
    with pytest.raises(InputError, match="not a session measure"):
        session_score(parse_measure("RBP@5"), rankings, sessions)
    with pytest.raises(InputError, match=r"sDCG@4: the session rankings were laid out 5 ranks per turn"):
        parse_measure("sDCG@4").compute(View(session_rankings(rankings, sessions, 5)))


def test_session_measures_have_no_intent_aware_form():
    with pytest.raises(InputError, match="unknown measure 'sRBP-IA'"):
        parse_measure("sRBP-IA@10")
