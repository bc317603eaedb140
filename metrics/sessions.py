"""Sessions and conversations: which topics are the turns of one session, and every run's
rankings of a session's turns laid end to end.

A session file has one turn per line, three whitespace-separated fields::

    # session  position  topic
    s1         1         301
    s1         2         302

``position`` is a whole number >= 1: the turn's place in its session (turns are read in
position order; a position no line gives is a turn nobody judged). ``#`` starts a comment;
blank lines are skipped. A bad line raises InputError naming the file and line. TREC CAsT's
topic ids name their own sessions: ``106_3`` is turn 3 of conversation 106
(:func:`sessions_from_ids`).

The joined structure, :class:`SessionRankings`, is a :class:`metrics.rankings.Rankings` whose
"topics" are the sessions and whose ranking of a session is its turns' rankings, each cut (or
padded) to the same ``width``, laid end to end: column (q - 1) * width + i - 1 is rank i of turn
q. It is built from the rankings of the turns by indexing topics, never by reading files again.
What is not known counts as unjudged, so that every measure's residual and every model's upper
end sees it: a rank past the end of a turn's ranking (the run retrieved fewer than ``width``), a
turn the run did not answer (an empty ranking), and a turn the qrels do not judge (its topic is
not among the rankings' topics: nothing of it is known). A session takes part in a run's mean if
the run retrieved something for one of its judged turns.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.rankings import Rankings


@dataclass(frozen=True)
class Sessions:
    """Sessions in the order first met: ``ids`` and, per session, its turns' topic ids by
    position (``None`` for a position no topic fills)."""

    ids: tuple[str, ...]
    turns: tuple[tuple[str | None, ...], ...]


def _sessions(rows: list[tuple[str, int, str]], where) -> Sessions:
    """Sessions from (session, position, topic) rows; ``where(i)`` names row i in errors."""
    by_session: dict[str, dict[int, str]] = {}
    seen: dict[str, int] = {}
    for i, (session, position, topic) in enumerate(rows):
        if topic in seen:
            raise InputError(f"{where(i)}: topic {topic!r} is already a turn ({where(seen[topic])})")
        seen[topic] = i
        turns = by_session.setdefault(session, {})
        if position in turns:
            raise InputError(f"{where(i)}: session {session!r} has two turns at position {position}")
        turns[position] = topic
    return Sessions(tuple(by_session), tuple(tuple(t.get(q) for q in range(1, max(t) + 1))
                                             for t in by_session.values()))


def read_sessions(path: str | os.PathLike) -> Sessions:
    """The sessions of a session file (see the module's docstring).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "sessions.txt"
    >>> _ = f.write_text("# session position topic\\na 2 t2\\na 1 t1\\nb 1 t3\\n")
    >>> read_sessions(f)
    Sessions(ids=('a', 'b'), turns=(('t1', 't2'), ('t3',)))
    """
    rows, lines = [], []
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        raise InputError(f"{path}: cannot read the session file ({e.strerror})") from None
    for n, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 3:
            raise InputError(f"{path}:{n}: expected 'session position topic', got {len(fields)} field(s)")
        if not re.fullmatch(r"\d+", fields[1]) or int(fields[1]) < 1:
            raise InputError(f"{path}:{n}: position {fields[1]!r} is not a whole number >= 1")
        rows.append((fields[0], int(fields[1]), fields[2]))
        lines.append(n)
    if not rows:
        raise InputError(f"{path}: no session in the file")
    return _sessions(rows, lambda i: f"{path}:{lines[i]}")


CAST_ID = re.compile(r"(.+)_(\d+)")


def sessions_from_ids(topics) -> Sessions:
    """Sessions named by TREC CAsT's topic ids ``SESSION_TURN`` (``106_3``: turn 3 of 106),
    sessions in the order first met, topics in any order.

    >>> sessions_from_ids(["106_2", "106_1", "107_1", "106_4"])
    Sessions(ids=('106', '107'), turns=(('106_1', '106_2', None, '106_4'), ('107_1',)))
    """
    rows = []
    for topic in topics:
        match = CAST_ID.fullmatch(str(topic))
        if match is None or int(match.group(2)) < 1:
            raise InputError(f"topic {topic!r}: not a conversation's turn SESSION_TURN (e.g. 106_3); "
                             f"give the sessions in a file")
        rows.append((match.group(1), int(match.group(2)), str(topic)))
    if not rows:
        raise InputError("no topic to make sessions of")
    return _sessions(rows, lambda i: f"topic {rows[i][2]!r}")


@dataclass(frozen=True, kw_only=True)
class SessionRankings(Rankings):
    """Rankings whose topics are sessions (see the module's docstring): shapes (S, Σ, Q * width)
    with Q the most turns of a session; ``turns`` (Σ,) the number of turns of each session,
    ``turn_topics`` (Σ, Q) their topic ids ('' past a session's last turn) and ``turn_ideal``
    (Σ, Q * width) each turn's ideal ranking (its judged grades, best first) cut or padded to
    ``width``, laid end to end as the rankings are. ``length`` is turns * width: a session's
    every rank up to its last turn's width-th stands (unknown ones unjudged)."""

    width: int
    turns: np.ndarray
    turn_topics: np.ndarray
    turn_ideal: np.ndarray

    def grid(self, a: np.ndarray) -> np.ndarray:
        """An (S, Σ, Q * width) array as (S, Σ, Q, width): turn by rank."""
        return a.reshape(a.shape[:2] + (-1, self.width))


def session_rankings(rankings: Rankings, sessions: Sessions, width: int | None = None) -> SessionRankings:
    """The rankings of each session's turns laid end to end, each turn cut or padded to
    ``width`` ranks (default: the longest ranking). Vectorised: one fancy index per array.

    >>> from rpdi.metrics.rankings import Rankings
    >>> import numpy as np
    >>> r = Rankings.of_grades(np.array([[[1.0, 0.0], [2.0, 1.0]]]), np.array([[1.0], [2.0]]), [1, 2], 2.0,
    ...                        topics=np.array(["a_1", "a_2"], dtype=object))
    >>> s = session_rankings(r, sessions_from_ids(r.topics), width=3)
    >>> s.grid(s.grade)[0, 0].tolist(), s.grid(s.judged)[0, 0].tolist()
    ([[1.0, 0.0, 0.0], [2.0, 1.0, 0.0]], [[True, True, False], [True, True, False]])
    """
    width = rankings.depth if width is None else int(width)
    if width < 1:
        raise InputError(f"session width {width}: every turn needs at least one rank")
    Q = max(len(t) for t in sessions.turns)
    topic_ids = np.array([str(t) for t in rankings.topics], dtype=object)
    order = np.argsort(topic_ids)
    names = np.array([[t or "" for t in turns] + [""] * (Q - len(turns)) for turns in sessions.turns], dtype=object)
    where = np.searchsorted(topic_ids[order], names).clip(0, max(len(order) - 1, 0))
    index = order[where] if len(order) else np.zeros(names.shape, int)
    known = (topic_ids[index] == names) & (names != "") if len(order) else np.zeros(names.shape, bool)
    S, D = len(rankings.runs), rankings.depth
    ranks = np.arange(width)
    inside = known[None, :, :, None] & (ranks < np.minimum(rankings.length[:, index], width)[..., None])
    take = lambda a, fill: np.where(inside, a[:, index][..., np.minimum(ranks, D - 1)] if D else fill, fill)  # noqa: E731
    shape = (S, len(sessions.ids), Q * width)
    judged = take(rankings.judged, False) if D else np.zeros(inside.shape, bool)
    grade = np.where(judged, take(rankings.grade, 0.0) if D else 0.0, 0.0)
    doc = take(rankings.doc, -1) if D else np.full(inside.shape, -1)
    n_turns = np.array([len(t) for t in sessions.turns])
    ideal = np.where(known[..., None], rankings.ideal[index], 0.0)
    turn_ideal = np.pad(ideal, [(0, 0), (0, 0), (0, max(width - ideal.shape[-1], 0))])[..., :width]
    ideal = -np.sort(-ideal.reshape(len(sessions.ids), -1), axis=-1)
    words = None
    if rankings.words is not None:
        words = take(rankings.words, np.nan).reshape(shape)
    return SessionRankings(
        runs=rankings.runs, topics=np.array(sessions.ids, dtype=object), grade=grade.reshape(shape),
        judged=judged.reshape(shape), doc=doc.reshape(shape), length=np.broadcast_to(n_turns * width, shape[:2]).copy(),
        present=(known[None] & rankings.present[:, index] & (rankings.length[:, index] > 0)).any(-1),
        ideal=ideal, n_judged=np.where(known, rankings.n_judged[index], 0).sum(-1), max_grade=rankings.max_grade,
        words=words, width=width, turns=n_turns, turn_topics=names,
        turn_ideal=np.maximum(turn_ideal, 0.0).reshape(len(sessions.ids), -1))


def ideal_session(laid: SessionRankings) -> SessionRankings:
    """The ideal session of each session of ``laid``, one run ``ideal``: every turn's ideal
    ranking (:attr:`SessionRankings.turn_ideal`), every rank of it judged (nsDCG's normaliser).

    >>> from rpdi.metrics.rankings import Rankings
    >>> r = Rankings.of_grades(np.array([[[0.0, 2.0], [1.0, 0.0]]]), np.array([[2.0, 1.0], [1.0, 0.0]]), [2, 2], 2.0,
    ...                        topics=np.array(["a_1", "a_2"], dtype=object))
    >>> ideal_session(session_rankings(r, sessions_from_ids(r.topics))).grade.tolist()
    [[[2.0, 1.0, 1.0, 0.0]]]
    """
    grade = laid.turn_ideal[None]
    return replace(laid, runs=("ideal",), grade=grade, judged=np.ones(grade.shape, bool),
                   doc=np.full(grade.shape, -1), length=laid.length[:1].copy(), present=laid.present[:1].copy(),
                   words=None)


def session_width(measure, rankings: Rankings) -> int:
    """How deep a session measure reads each turn: its cutoff, else the longest ranking."""
    return rankings.depth if measure.cutoff is None else int(measure.cutoff)


def session_score(measure, rankings: Rankings, sessions: Sessions):
    """A session measure's :class:`metrics.view.Score` (S runs, Σ sessions) on the rankings of
    the sessions' turns (the ``rpdi eval --sessions`` path)."""
    from rpdi.metrics.view import View

    if not measure.spec.session:
        raise InputError(f"measure {measure.text!r}: not a session measure (see `rpdi measures`)")
    return measure.compute(View(session_rankings(rankings, sessions, session_width(measure, rankings))))


def session_means(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """(S,) each run's mean over the sessions taking part (NaN values left out)."""
    with np.errstate(invalid="ignore"):
        ok = present & np.isfinite(values)
        return np.where(ok, values, 0.0).sum(-1) / ok.sum(-1)


def check_session_call(measures, sessions, ties: str = "trec_eval", average: str = "macro", intents=None) -> bool:
    """Whether an evaluation is of sessions: every measure a session measure (then True), or
    none and no ``sessions`` given (False); InputError, one line, for a call that mixes them or
    asks for what sessions do not have yet (random tie orders, micro-averages, intents)."""
    session = [m.text for m in measures if m.spec.session]
    if not session:
        if sessions is not None:
            raise InputError("sessions: given, but no session measure (sRBP, sDCG, ...) reads them")
        return False
    single = [m.text for m in measures if not m.spec.session]
    if single:
        raise InputError(f"measure {single[0]!r} reads one query, {session[0]!r} a session: give session and "
                         f"single-query measures in separate calls")
    for given, what in ((ties != "trec_eval", f"ties {ties!r}"), (average != "macro", f"average {average!r}"),
                        (intents is not None, "intents")):
        if given:
            raise InputError(f"{what}: not with session measures ({session[0]!r}) yet")
    return True


def given_sessions(sessions, topics, runs=()) -> Sessions:
    """The sessions of an evaluation: ``sessions`` (a :class:`Sessions`, or a session file's
    path), else those the CAsT ids of ``topics`` (the qrels' topics) name. A session file's topic
    that neither the qrels (``topics``) nor a run (``runs``, :class:`metrics.trec.Run`) knows is
    an error: a misspelt topic would otherwise be a turn nobody judged."""
    if sessions is None:
        return sessions_from_ids(str(t) for t in topics)
    if isinstance(sessions, Sessions):
        return sessions
    found = read_sessions(sessions)
    known = {str(t) for t in topics}.union(*({str(t) for t in run.topic.dictionary.to_pylist()} for run in runs))
    unknown = [t for turns in found.turns for t in turns if t is not None and t not in known]
    if unknown:
        raise InputError(f"{sessions}: topic {unknown[0]!r} is in neither the qrels nor a run"
                         + (f" ({len(unknown)} such topics)" if len(unknown) > 1 else ""))
    return found


def session_records(rankings: Rankings, measures, sessions: Sessions, per_session: bool = False,
                    undefined: str = "zero") -> list[dict]:
    """``rpdi eval``'s records for session measures: per run and measure, with ``per_session``
    one per session taking part (``topic`` the session's id), then ``topic`` ``"all"``: the mean
    over the sessions taking part (:func:`session_means`), the residual's mean likewise."""
    from rpdi.metrics.view import View

    records = []

    def record(run, topic, m, value, residual) -> dict:
        value = float(value)
        value = None if np.isnan(value) and undefined == "null" else 0.0 if np.isnan(value) else value
        return {"run": run, "topic": str(topic), "measure": m.text, "value": value,
                "residual": None if residual is None else float(residual), "method": m.spec.method}

    scores = [(m, session_rankings(rankings, sessions, session_width(m, rankings))) for m in measures]
    scores = [(m, laid, m.compute(View(laid))) for m, laid in scores]
    for s, run in enumerate(rankings.runs):
        for m, laid, score in scores:
            present, value = laid.present[s], score.value[s]
            residual = None if score.residual is None else score.residual[s]
            if per_session:
                for t in np.flatnonzero(present):
                    records.append(record(run, laid.topics[t], m, value[t], None if residual is None else residual[t]))
            mean = session_means(value[None], present[None])[0]
            mean_res = None if residual is None or not present.any() else residual[present].mean()
            records.append(record(run, "all", m, mean, mean_res))
    return records
