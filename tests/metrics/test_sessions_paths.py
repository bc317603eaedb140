"""esCG (Kanoulas, Carterette, Clough & Sanderson 2011) and nsDCG: the closed forms against plain
re-derivations written here, esCG's by enumerating every path a user may take through a session
with its probability, on sessions whose turns retrieve the same documents again."""

from __future__ import annotations

import itertools
import math
import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

from rpdi.metrics.errors import InputError
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.sessions import session_rankings, session_score, sessions_from_ids
from rpdi.metrics.view import View


def _random(seed, session_topics, sessions=4, most_turns=3, depth=4, pool=4):
    """Rankings of the turns of a few sessions (CAsT ids), grades 0..3, unjudged documents,
    short and empty rankings, a turn position nobody judged, and the documents of a session drawn
    from a small pool, so that turns retrieve the same documents (now and then twice in a turn)."""
    rng = np.random.default_rng(seed)
    topics = session_topics(rng, sessions, most_turns)
    S, T = 2, len(topics)
    length = rng.integers(0, depth + 1, (S, T))
    length[0, 0] = 0
    inside = np.arange(depth) < length[..., None]
    judged = (rng.random((S, T, depth)) < 0.8) & inside
    grade = np.where(judged, rng.integers(0, 4, (S, T, depth)), 0).astype(float)
    session = np.array([int(t.split("_")[0]) for t in topics])
    doc = np.where(inside, session[None, :, None] * pool + rng.integers(0, pool, (S, T, depth)), -1)
    ideal = -np.sort(-rng.integers(0, 4, (T, depth)), axis=-1).astype(float)
    r = Rankings.of_grades(grade, ideal, [depth] * T, 3.0, judged=judged, length=length,
                           topics=np.array(topics, dtype=object))
    return replace(r, doc=doc), sessions_from_ids(topics)


def _turns(laid, s, x):
    """Session x of run s as a list of turns, each a list of (grade, known, document) by rank."""
    g, j, d = (laid.grid(a)[s, x] for a in (laid.grade, laid.judged, laid.doc))
    return [[(float(g[q, i]), bool(j[q, i]), int(d[q, i])) for i in range(laid.width)]
            for q in range(int(laid.turns[x]))]


def escg_by_enumeration(turns, p_reform, p_down, top):
    """Every path: the user reads turns 1..m, stopping in turn q at rank r_q (probability
    p_down^(r-1)(1 - p_down), p_down^(k-1) at the last rank k), moving on after each turn but the
    last read with p_reform, ending the session after it with 1 - p_reform (1 after the last
    turn). The path's cumulated gain sums the grades of the documents it read, each the first
    time only; for the upper end every unknown document read counts ``top``."""
    k = len(turns[0])
    stop = [p_down ** (r - 1) * (1 - p_down) if r < k else p_down ** (k - 1) for r in range(1, k + 1)]
    value = upper = 0.0
    for m in range(1, len(turns) + 1):
        end = 1 - p_reform if m < len(turns) else 1.0
        for ranks in itertools.product(range(1, k + 1), repeat=m):
            prob = p_reform ** (m - 1) * end * math.prod(stop[r - 1] for r in ranks)
            read, low, high = set(), 0.0, 0.0
            for turn, r in zip(turns, ranks):
                for grade, known, doc in turn[:r]:
                    new = doc < 0 or doc not in read
                    read.add(doc)
                    low += grade if known and new else 0.0
                    high += (grade if new else 0.0) if known else top
            value += prob * low
            upper += prob * high
    return value, upper - value


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name, p_reform, p_down", [
    ("esCG@4", 0.8, 0.7), ("esCG(p_reform=0.5,p_down=0.9)@3", 0.5, 0.9), ("esCG(p_reform=1,p_down=0.3)@4", 1.0, 0.3),
    ("esCG(p_reform=0.6,p_down=1)@2", 0.6, 1.0), ("esCG(p_reform=0,p_down=0.5)@4", 0.0, 0.5),
])
def test_escg_is_the_expectation_over_paths(seed, name, p_reform, p_down, session_topics):
    rankings, sessions = _random(seed, session_topics)
    measure = parse_measure(name)
    score = session_score(measure, rankings, sessions)
    laid = session_rankings(rankings, sessions, measure.cutoff)
    duplicates = 0
    for s in range(2):
        for x in range(len(sessions.ids)):
            turns = _turns(laid, s, x)
            docs = [d for turn in turns for _, _, d in turn if d >= 0]
            duplicates += len(docs) - len(set(docs))
            value, residual = escg_by_enumeration(turns, p_reform, p_down, 3.0)
            assert score.value[s, x] == pytest.approx(value, rel=1e-12, abs=1e-14)
            assert score.residual[s, x] == pytest.approx(residual, rel=1e-12, abs=1e-14)
    assert duplicates > 0  # the sessions do read documents again


def test_escg_without_duplicates_is_a_reading_probability_sum():
    """With every document new, esCG = sum_q sum_i g(q, i) p_reform^(q-1) p_down^(i-1): turn q is
    reached w.p. p_reform^(q-1), its rank i read w.p. p_down^(i-1); here a document of grade g
    at rank i of turn q of a two-turn session, p_reform = p_down = 1/2."""
    grade = np.array([[[3.0, 1.0], [2.0, 0.0]]])
    r = Rankings.of_grades(grade, np.zeros((2, 1)), [1, 1], 3.0, topics=np.array(["a_1", "a_2"], dtype=object))
    got = session_score(parse_measure("esCG(p_reform=0.5,p_down=0.5)@2"), r, sessions_from_ids(r.topics))
    assert got.value[0, 0] == pytest.approx(3 + 1 / 2 + 2 / 2)


def nsdcg_by_definition(turns, ideals, b, bq):
    """sDCG (Järvelin et al. 2008: a turn's DCG, gain = grade, no discount before rank b then
    1/log_b i, divided by 1 + log_bq q) over the sDCG of the session whose every turn is its
    topic's ideal ranking; unknown ranks at grade 3 for the upper end."""
    def sdcg(rows):
        return sum(g / ((1 + math.log(q, bq)) * (1.0 if i < b else math.log(i, b)))
                   for q, row in enumerate(rows, start=1) for i, g in enumerate(row, start=1))

    best = sdcg(ideals)
    if best == 0:
        return math.nan, math.nan
    value = sdcg([[g for g, _, _ in turn] for turn in turns])
    upper = sdcg([[g if known else 3.0 for g, known, _ in turn] for turn in turns])
    return value / best, (upper - value) / best


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("name, b, bq", [("nsDCG@4", 2, 4), ("nsDCG(b=3,bq=2)@3", 3, 2), ("nsDCG@6", 2, 4)])
def test_nsdcg_equals_its_definition(seed, name, b, bq, session_topics):
    rankings, sessions = _random(seed, session_topics)
    measure = parse_measure(name)
    score = session_score(measure, rankings, sessions)
    laid = session_rankings(rankings, sessions, measure.cutoff)
    k, where = measure.cutoff, {t: i for i, t in enumerate(rankings.topics)}
    for s in range(2):
        for x, topics in enumerate(sessions.turns):
            ideals = [[0.0] * k if t is None else (list(rankings.ideal[where[t]][:k]) + [0.0] * k)[:k] for t in topics]
            value, residual = nsdcg_by_definition(_turns(laid, s, x), ideals, b, bq)
            np.testing.assert_allclose([score.value[s, x], score.residual[s, x]], [value, residual], rtol=1e-12)


def _paths(n_turns, k, p_reform, p_down):
    """Every path through a session of ``n_turns`` turns of k ranks, with its probability: the
    stopping ranks (r_1, ..., r_m) of the turns read, p_down^(r-1)(1 - p_down) each (p_down^(k-1)
    at r = k), p_reform for each move to the next query, 1 - p_reform for ending before the last."""
    stop = [p_down ** (r - 1) * (1 - p_down) if r < k else p_down ** (k - 1) for r in range(1, k + 1)]
    for m in range(1, n_turns + 1):
        end = 1 - p_reform if m < n_turns else 1.0
        for ranks in itertools.product(range(1, k + 1), repeat=m):
            yield ranks, p_reform ** (m - 1) * end * math.prod(stop[r - 1] for r in ranks)


def _dcg(grades, b):
    """Järvelin & Kekäläinen's DCG of a list: position j counts 1 up to b, then 1/log_b j."""
    return sum(g / (1.0 if j <= b else math.log(j, b)) for j, g in enumerate(grades, start=1))


def path_dcg_by_enumeration(turns, ideal, p_reform, p_down, b, top, normalise):
    """esDCG (or with ``normalise`` esnDCG) and its residual: over every path, the DCG of the
    documents it read concatenated in the order read (a document read again counts again; for
    the upper end an unknown one counts ``top``), divided with ``normalise`` by the DCG of the
    session's ideal list (``ideal``, best first, zeros past its end) at the path's length."""
    value = upper = 0.0
    for ranks, prob in _paths(len(turns), len(turns[0]), p_reform, p_down):
        read = [x for turn, r in zip(turns, ranks) for x in turn[:r]]
        low = _dcg([g if known else 0.0 for g, known, _ in read], b)
        high = _dcg([g if known else top for g, known, _ in read], b)
        best = _dcg((list(ideal) + [0.0] * len(read))[:len(read)], b) if normalise else 1.0
        if best == 0:
            return math.nan, math.nan
        value += prob * low / best
        upper += prob * high / best
    return value, upper - value


def _session_ideal(rankings, topics):
    """The session's ideal list: the judged grades of all its turns' topics, best first."""
    where = {t: i for i, t in enumerate(rankings.topics)}
    return sorted((g for t in topics if t is not None for g in rankings.ideal[where[t]]), reverse=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name, p_reform, p_down, b", [
    ("@4", 0.8, 0.7, 2), ("(p_reform=0.5,p_down=0.9,b=3)@3", 0.5, 0.9, 3), ("(p_reform=1,p_down=0.3)@4", 1.0, 0.3, 2),
    ("(p_reform=0.6,p_down=1,b=1.5)@2", 0.6, 1.0, 1.5), ("(p_reform=0,p_down=0.5)@4", 0.0, 0.5, 2),
])
@pytest.mark.parametrize("family", ["esDCG", "esnDCG"])
def test_path_dcg_is_the_expectation_over_paths(seed, name, p_reform, p_down, b, family, session_topics):
    rankings, sessions = _random(seed, session_topics)
    measure = parse_measure(family + name)
    score = session_score(measure, rankings, sessions)
    laid = session_rankings(rankings, sessions, measure.cutoff)
    duplicates = 0
    for s in range(2):
        for x, topics in enumerate(sessions.turns):
            turns = _turns(laid, s, x)
            docs = [d for turn in turns for _, _, d in turn if d >= 0]
            duplicates += len(docs) - len(set(docs))
            value, residual = path_dcg_by_enumeration(turns, _session_ideal(rankings, topics), p_reform, p_down, b,
                                                      3.0, family == "esnDCG")
            np.testing.assert_allclose([score.value[s, x], score.residual[s, x]], [value, residual],
                                       rtol=1e-12, atol=1e-14)
    assert duplicates > 0  # the sessions do read documents again


def test_esndcg_averages_the_paths_ratios_not_their_ratio_of_means():
    """One turn [2, 0], ideal [2, 2], p_down = 1/2: the path that reads one document scores
    2/2 = 1, the one that reads two 2/(2 + 2) = 1/2: esnDCG = 3/4, whereas E[DCG]/E[IDCG(L)]
    would be 2 / 3 = 0.667."""
    r = Rankings.of_grades(np.array([[[2.0, 0.0]]]), np.array([[2.0, 2.0]]), [2], 2.0,
                           topics=np.array(["a_1"], dtype=object))
    got = session_score(parse_measure("esnDCG(p_down=0.5)@2"), r, sessions_from_ids(r.topics))
    assert got.value[0, 0] == pytest.approx(0.75, rel=1e-12)


@pytest.mark.parametrize("family", ["esDCG", "esnDCG"])
def test_sampled_paths_agree_with_the_closed_form(family, session_topics):
    """Paths drawn one by one as Jiang & Allan's sampler draws them (read a document, go on down
    with p_down; after a turn, the next with p_reform), each scored by its own DCG (and ideal
    DCG at its own length): their mean is within 4.5 standard errors of the closed form."""
    rankings, sessions = _random(4, session_topics)
    measure = parse_measure(family + "(p_reform=0.7,p_down=0.6)@4")
    score = session_score(measure, rankings, sessions)
    laid = session_rankings(rankings, sessions, 4)
    rng = np.random.default_rng(2026)
    for x, topics in enumerate(sessions.turns):
        turns, ideal = _turns(laid, 1, x), _session_ideal(rankings, topics)
        values = []
        for _ in range(6000):
            read = []
            for q, turn in enumerate(turns):
                for i, item in enumerate(turn):
                    read.append(item[0])
                    if i + 1 == len(turn) or rng.random() >= 0.6:
                        break
                if rng.random() >= 0.7:
                    break
            best = _dcg((ideal + [0.0] * len(read))[:len(read)], 2) if family == "esnDCG" else 1.0
            values.append(_dcg(read, 2) / best if best else math.nan)
        values = np.array(values)
        if np.isnan(values).all():
            assert np.isnan(score.value[1, x])
            continue
        assert abs(values.mean() - score.value[1, x]) <= 4.5 * values.std() / np.sqrt(len(values)) + 1e-12


def _deep_session(depth):
    """One session of two turns, ``depth`` ranks each, every other document relevant."""
    grade = np.tile(np.arange(depth) % 2, (1, 2, 1)).astype(float)
    r = Rankings.of_grades(grade, np.ones((2, depth)), [depth] * 2, 1.0, topics=np.array(["s_1", "s_2"], dtype=object))
    return session_rankings(r, sessions_from_ids(r.topics))


def test_esdcg_takes_no_table_of_the_paths():
    """esDCG's weights are a (turns, ranks) array: on 2 turns of 3000 ranks the (turn, rank,
    documents read) table would be 2 x 3000 x 6001 floats, 275 MiB."""
    laid = _deep_session(3000)
    tracemalloc.start()
    value = parse_measure("esDCG").compute(View(laid)).value
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 2 ** 20
    assert np.isfinite(value).all() and value[0, 0] > 0


def test_esndcg_past_its_memory_budget_is_an_input_error():
    with pytest.raises(InputError, match=r"measure esnDCG: 3000 ranks a turn would take [\d.]+ GiB"):
        parse_measure("esnDCG").compute(View(_deep_session(3000)))
