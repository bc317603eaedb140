"""``rpdi explain`` of a session measure (sRBP, sDCG, a session user of one's own): what the user
does turn by turn on an example session (:mod:`rpdi.usermodels.per_turn`).

A session is given as its turns' rankings separated by ``|``, each as ``rpdi explain`` reads a
ranking: ``$-$--|-----|$$---`` (the default) or ``2,0,1|0,3``. Each turn is read to the
measure's cutoff (``@5``: five ranks a turn), else to the longest turn's length.

Example: ``rpdi explain "sRBP(p=0.8,b=0.6)"``: the user reaches turn q with probability
0.6154^(q-1), x = p(1 - b)/(1 - b p), and reads rank i of a turn it reached with (b p)^(i-1) =
0.48^(i-1).
"""

from __future__ import annotations

import math
import textwrap

import numpy as np

from rpdi.choices import TABLE_II_RANKING
from rpdi.experiments.formats import align, number, to_json
from rpdi.metrics.errors import InputError
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.sessions import SessionRankings, session_rankings, sessions_from_ids
from rpdi.usermodels.per_turn import PerTurn, per_turn

SESSION_RANKING = "$-$--|-----|$$---"  # explain's session for a session measure by default


def explain_session(args, model, parse_ranking, header) -> str:
    """The text or JSON of ``rpdi explain`` for a session user ``model``, on ``args.ranking`` or,
    given as the single-ranking default, on :data:`SESSION_RANKING`; ``parse_ranking`` reads one
    turn's ranking, ``header`` gives the lines that name the user and its aggregation."""
    for given, option in ((args.depth, "--depth"), (args.plot, "--plot")):
        if given is not None:
            raise InputError(f"{option}: not for a session measure ({args.measure}) yet")
    if args.intents is not None:
        raise InputError(f"--intents: {args.measure} reads no intents (a diversity or X-IA measure does)")
    text = (SESSION_RANKING if args.ranking == TABLE_II_RANKING else args.ranking).strip()
    turns = [parse_ranking(turn) for turn in text.split("|")]
    session = example_session(turns, model.measure.cutoff)
    view = per_turn(model, session)
    if args.format == "json":
        return to_json(_record(args.measure, model, text, turns, view)) + "\n"
    return _table(header(args.measure, model, text), text, model, turns, view, args.digits)


def example_session(turns: list[list], cutoff: int | None) -> SessionRankings:
    """One session of the given turns (grades per rank, None unjudged), each read to ``cutoff``
    (else the longest turn's length); each turn's ideal ranking is its own grades', the largest
    grade the largest given (as for :func:`metrics.evaluate.rankings_from_grades`)."""
    Q, D = len(turns), max(len(t) for t in turns)
    grade, judged = np.zeros((1, Q, D)), np.zeros((1, Q, D), bool)
    for q, t in enumerate(turns):
        judged[0, q, :len(t)] = [g is not None for g in t]
        grade[0, q, :len(t)] = [g or 0.0 for g in t]
    ideal = -np.sort(-np.where(judged[0], grade[0], 0.0), axis=1)
    top = max((g for t in turns for g in t if g is not None), default=0.0)  # as explain's one ranking
    rankings = Rankings.of_grades(grade, ideal, judged[0].sum(1), top, judged=judged,
                                  length=np.array([[len(t) for t in turns]]), runs=("run",),
                                  topics=np.array([f"s_{q + 1}" for q in range(Q)], dtype=object))
    return session_rankings(rankings, sessions_from_ids(rankings.topics), cutoff or D)


def _cell(x, digits: int) -> str:
    return "–" if x is None or math.isnan(x) else number(float(x), digits)


def _as_read(view: PerTurn) -> bool:
    """Whether the sum of V g is the value: the user gains each document's gain as read."""
    return math.isnan(view.weighted) or abs(view.weighted - view.value) <= 1e-9 * max(1.0, abs(view.value))


def _plain(model, view: PerTurn) -> bool:
    """Whether W = V: a total, not normalised, that gains each document's gain as read."""
    return model.aggregation == "total" and not model.normalised and _as_read(view)


def _notes(model, view: PerTurn) -> list[str]:
    notes = []
    if model.aggregation != "total":
        notes.append(f"the value is the user's {model.aggregation}: W is given for a total (E[G]) only")
    elif not _as_read(view):
        notes.append(f"this user does not gain each document's gain as read (the sum of V g is "
                     f"{view.weighted:.4g}, not the value): W is not defined, the value is its own expectation")
    if model.normalised:
        notes.append("the value is divided by the same on the session's ideal rankings")
    return notes


def _weights(model, view: PerTurn) -> np.ndarray:
    """W(q, i), the weight of the gain at rank i of turn q in the value: V(q, i) for a total that
    accrues each gain as read (:func:`_plain`), else NaN."""
    return view.read if _plain(model, view) else np.full(view.read.shape, np.nan)


def _moves_on(view: PerTurn) -> np.ndarray:
    """(Q,) P(going on to turn q + 1 | turn q reached) (0 at the last turn; NaN where unreached)."""
    r = view.reached
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(r > 0, np.append(r[1:], 0.0) / np.where(r > 0, r, 1.0), np.nan)


def _table(header: list[str], shown: str, model, turns: list[list], view: PerTurn, digits: int) -> str:
    cell = lambda x: _cell(x, digits)  # noqa: E731
    Q, width = view.read.shape
    lines = header[:2] + ["W(q, i) = V(q, i)" if _plain(model, view) else "W(q, i): none", f"session: {shown} ({Q} turns, {width} ranks read each)"]
    upper = (f" (up to {cell(view.upper)} were the unjudged documents, short rankings and unjudged turns "
             f"relevant)" if view.upper > view.value else "")
    lines.append(f"E[documents read] = {cell(view.documents)}, E[turns reached] = {cell(view.turns)}, "
                 f"value = {cell(view.value)}{upper}")
    on = _moves_on(view)
    per = [["turn", "R(q)", "moves on", "stops", "E[read]"]]
    per += [[str(q + 1), cell(view.reached[q]), cell(on[q]), cell(1 - on[q]), cell(view.read[q].sum())]
            for q in range(Q)]
    W = _weights(model, view)
    rows = [["turn", "rank", "grade", "gain", "V", "down", "next", "stop", "W"]]
    for q in range(Q):
        for i in range(width):
            shown = "" if i >= len(turns[q]) else "?" if turns[q][i] is None else f"{turns[q][i]:g}"
            rows.append([str(q + 1), str(i + 1), shown] + [cell(a[q, i]) for a in (
                view.gain, view.read, view.down, view.next, view.stop, W)])
    legend = ("R(q): P(reaching turn q), the query-position discount; moves on / stops: P(going on to turn q + 1 "
              "/ stopping in turn q | turn q reached); E[read]: the documents read in turn q. V: P(rank i of turn q "
              "is read), V/R(q) the rank discount within the turn; down / next / stop: what a user who read it does "
              "then: reads rank i + 1, moves to the next query's first document, stops; W: the weight of the gain "
              "there in the value")
    return ("\n".join(lines) + "\n\n" + align(per) + "\n" + align(rows)
            + "\n".join([textwrap.fill(legend, 100)] + _notes(model, view)) + "\n")


def _record(measure: str, model, shown: str, turns: list[list], view: PerTurn) -> dict:
    """The JSON: undefined numbers are null; ``turns`` the grades of each turn (null: unjudged)."""
    def value(x):
        return None if x is None or not math.isfinite(x) else float(x)

    W, on = _weights(model, view), _moves_on(view)
    return {"measure": measure, "user": model.rule, "aggregation": model.aggregation,
            "normalised": model.normalised, "session": shown, "turns": turns, "width": int(view.read.shape[1]),
            "value": value(view.value), "upper": value(view.upper), "expected_documents": value(view.documents),
            "expected_turns": value(view.turns),
            "per_turn": [{"turn": q + 1, "reached": value(view.reached[q]), "moves_on": value(on[q]),
                          "read": value(view.read[q].sum())} for q in range(len(turns))],
            "ranks": [{"turn": q + 1, "rank": i + 1, "gain": value(view.gain[q, i]), "V": value(view.read[q, i]),
                       "down": value(view.down[q, i]), "next": value(view.next[q, i]),
                       "stop": value(view.stop[q, i]), "W": value(W[q, i])}
                      for q in range(len(turns)) for i in range(view.read.shape[1])],
            "notes": _notes(model, view)}
