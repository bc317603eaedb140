"""``rpdi explain``: a measure's user in the C/W/L view, on a ranking one gives.

For a built-in measure with a browsing model, or a model of one's own (``path.py:Class(...)``):
the user in one sentence, its aggregation, and per rank i of the ranking C(i), W(i), L(i) and
V(i) (:mod:`rpdi.usermodels.per_rank`), the expected depth E[N] and the value, and C/W/L's
expected rate of gain, total gain and depth with their residuals (cwl_eval's EU, ETU, ED). The default
ranking is the RBP paper's example (Moffat & Zobel 2008, Table II), ``$$---$----$-----$---``.

Example: ``rpdi explain "RBP(p=0.8)"`` shows W(i) = 0.2 x 0.8^(i-1) and E[N] = 5.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np

from rpdi.choices import TABLE_II_RANKING
from rpdi.experiments.commands.outputs import PLOT_FORMATS, check_writable
from rpdi.experiments.formats import align, number, to_json
from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import rankings_from_grades
from rpdi.usermodels import model_for
from rpdi.usermodels.mixture import Mixture
from rpdi.usermodels.per_rank import PerRank, per_rank

AGGREGATIONS = {"rate": "E[G]/E[N], the expected gain over the expected number of documents read",
                "mean_rate": "E[G/N], the mean of each user's own rate of gain",
                "total": "E[G], the expected total gain"}
WEIGHTS = {"rate": "V(i)/E[N]", "mean_rate": "the sum over j >= i of L(j)/j", "total": "V(i)"}
_SYMBOLS = re.compile(r"[$?-]+")
_NUMBERS = re.compile(r"\s*\d+(\.\d*)?(\s*[,\s]\s*\d+(\.\d*)?)*\s*")


def run(args) -> str:
    check_writable(args.plot, "--plot", formats=PLOT_FORMATS)
    plot_format = os.path.splitext(args.plot)[1].lower().lstrip(".") if args.plot else None
    model = model_for(args.measure)
    if model.measure.spec.session:  # a session user: turn by turn, on an example session
        from rpdi.experiments.commands.explain_session import explain_session

        return explain_session(args, model, parse_ranking, _header)
    if model.measure.spec.intents:  # a diversity or intent-aware user: documents as the intents they serve
        text = (DIVERSITY_RANKING if args.ranking == TABLE_II_RANKING else args.ranking).strip()
        rankings, grades = intent_ranking(text, args.intents)
        shown = text
    else:
        if args.intents is not None:
            raise InputError(f"--intents: {args.measure} reads no intents (a diversity or X-IA measure does)")
        text = args.ranking.strip()
        grades = parse_ranking(text)
        shown = text if _SYMBOLS.fullmatch(text) else ",".join(f"{g:g}" for g in grades)
        judged = [g is not None for g in grades]
        rankings = rankings_from_grades([g or 0.0 for g in grades], judged=judged)
    depth = len(grades) if args.depth is None else args.depth
    if not 1 <= depth <= model.horizon:
        raise InputError(f"--depth: must be between 1 and {model.horizon} (the user's horizon), not {depth}")
    view = per_rank(model, rankings, depth)
    notes = _notes(model, view, depth, len(grades))
    if args.plot:
        from rpdi.experiments.plots import per_rank as plot_per_rank

        try:
            plot_per_rank(view, args.plot, plot_format, f"{args.measure} on {shown}")
        except OSError as exc:
            raise InputError(f"--plot {args.plot}: cannot write there: {exc.strerror or exc}") from None
    if args.format == "json":
        return to_json(_record(args.measure, model, shown, view, grades, notes)) + "\n"
    return _table(args.measure, model, shown, view, grades, notes, args.digits)


DIVERSITY_RANKING = "ab,a,-,b,c,?"  # explain's ranking for a diversity measure by default
_INTENT_ITEM = re.compile(r"[A-Za-z0-9]+|-|\?")


def intent_ranking(text: str, intents: str | None):
    """One topic's diversity rankings from ``ab,a,-,c,?``: per document the intents (one letter
    or digit each) it is relevant to, - none (judged), ? unjudged; ``intents`` P(i|q) inline
    (``a=0.6,b=0.4``) or a file of ``q subtopic probability`` lines (the topic is ``q``), else
    uniform. Returns (rankings, per-document grades for the table: 1 relevant to some intent, 0,
    None unjudged)."""
    from rpdi.metrics.diversity import DiversityQrels, diversity_rankings, intents_from_dict, read_intents
    from rpdi.metrics.trec import run_from_dict

    items = [x for x in re.split(r"[,\s]+", text) if x]
    if not items or not all(_INTENT_ITEM.fullmatch(x) for x in items):
        raise InputError(f"--ranking {text!r}: for a diversity measure, give per document the intents it is "
                         f"relevant to (one letter or digit each), - for none, ? unjudged: e.g. ab,a,-,c,?")
    names = sorted({c for x in items if x not in "-?" for c in x})
    if not names:
        raise InputError(f"--ranking {text!r}: no document is relevant to any intent")
    rows = [("q", c, f"d{j}", 1.0) for j, x in enumerate(items) if x not in "-?" for c in x]
    rows += [("q", names[0], f"d{j}", 0.0) for j, x in enumerate(items) if x == "-"]
    qrels = DiversityQrels(*[[r[k] for r in rows] for k in range(3)], np.array([r[3] for r in rows]), "--ranking")
    run = run_from_dict("run", {"q": {f"d{j}": float(len(items) - j) for j in range(len(items))}})
    given = None
    if intents is not None:
        if os.path.isfile(intents):
            given = read_intents(intents)
        else:
            try:
                given = intents_from_dict({"q": dict(kv.split("=") for kv in intents.split(","))}, "--intents")
            except ValueError:
                raise InputError(f"--intents {intents!r}: expected a file, or a=0.6,b=0.4 (intent=probability)") from None
    grades = [None if x == "?" else 0.0 if x == "-" else 1.0 for x in items]
    return diversity_rankings(qrels, [run], intents=given), grades


def parse_ranking(text: str) -> list:
    """Grades from ``1,1,0,0,2`` (numbers >= 0, by commas or spaces) or ``$$--$?`` ($ relevant,
    - not relevant, ? unjudged: None); InputError otherwise."""
    text = text.strip()
    if _SYMBOLS.fullmatch(text):
        return [{"$": 1.0, "-": 0.0, "?": None}[c] for c in text]
    if _NUMBERS.fullmatch(text):
        grades = [float(g) for g in re.split(r"[,\s]+", text) if g]
        if all(math.isfinite(g) for g in grades):
            return grades
    raise InputError(f"--ranking {text!r}: expected grades (e.g. 1,1,0,0,2) or a string of $ (relevant), "
                     f"- (not relevant) and ? (unjudged), e.g. $$--$")


def _notes(model, view: PerRank, depth: int, length: int) -> list[str]:
    """What a reader must know to read the table right."""
    notes = []
    if math.isnan(view.value):
        notes.append("the measure is undefined on this ranking (e.g. no relevant document for AP)")
    if isinstance(model, Mixture):
        notes.append(f"the user draws {model.drawn} first: gain is the intents' gains weighted by P(i|q), V, C "
                     f"and L are averages over the draw" + ("" if not np.isnan(view.W).all() else
                                                          "; each intent is normalised by its own ideal ranking, "
                                                          "so no one weight W(i) serves them all"))
    if view.start_states > 1:
        notes.append(f"the user starts in a state drawn from {view.start_states} (as AP's user draws its target): "
                     f"C, L and V are averages over the draw, and W(i) is the expected weight")
    if view.never > 0:
        notes.append(f"with probability {view.never:.4g} the user never stops (N is infinite), so E[N] is "
                     f"infinite; such users are left out of V and C from where nothing more is to be gained")
    if not math.isnan(view.value) and abs(view.weighted - view.value) > 1e-9 * max(1.0, abs(view.value)):
        notes.append(f"this user does not gain each document's gain as read (the sum of W(i) g(i) is "
                     f"{view.weighted:.4g}): the value is its own expectation")
    beyond = float(view.reach[-1] * (view.C[-1] if not math.isnan(view.C[-1]) else 0.0))
    if beyond > 0:
        notes.append(f"P(reading past rank {depth}) = {beyond:.4g}: W and L go on there"
                     + (" (beyond the ranking: valued as not relevant)" if depth >= length else ""))
    return notes


def _header(measure: str, model, shown: str) -> list[str]:
    aggregation = AGGREGATIONS.get(model.aggregation, model.aggregation)
    weight = WEIGHTS.get(model.aggregation, "none")
    if model.normalised:
        aggregation += ", divided by the same on the ideal ranking"
        weight += ", divided by the same on the ideal ranking"
    return [f"{measure}: {model.rule}", f"aggregation: {model.aggregation} = {aggregation}",
            f"W(i) = {weight}", f"ranking: {shown}"]


def _table(measure, model, shown, view: PerRank, grades, notes, digits: int) -> str:
    def cell(x):
        return "–" if math.isnan(x) else number(float(x), digits)

    def grade(i):  # empty past the ranking's end
        return "" if i >= len(grades) else "?" if grades[i] is None else f"{grades[i]:g}"

    rows = [["rank", "grade", "gain", "V(i)", "C(i)", "W(i)", "L(i)"]]
    rows += [[str(i + 1), grade(i), cell(view.gain[i]), cell(view.reach[i]), cell(view.C[i]), cell(view.W[i]),
              cell(view.L[i])] for i in range(view.L.size)]
    depth = "infinite" if math.isinf(view.expected_depth) else cell(view.expected_depth)
    lines = _header(measure, model, shown)
    upper = (f" (up to {cell(view.upper)} were the unjudged documents and what lies beyond the ranking "
             f"relevant)" if view.upper > view.value else "")
    lines.append(f"E[N] = {depth}, value = {cell(view.value)}{upper}")
    lines.append("C/W/L (cwl_eval's EU, ETU, ED; + the residual): " + ", ".join(
        f"{label} = {'infinite' if math.isinf(value) else cell(value)}" + (f" {'+' if residual > 0 else '-'}{cell(abs(residual))}" if residual and not math.isnan(residual) else "")
        for label, (value, residual) in zip(("E[G]/E[N]", "E[G]", "E[N]"), view.cwl.values())))
    legend = ("V(i): P(rank i is read); C(i): P(reading rank i + 1 | rank i read); W(i): the weight of "
              "the gain at rank i; L(i): P(stopping at rank i)")
    return "\n".join(lines) + "\n\n" + align(rows) + "\n" + "\n".join([legend] + notes) + "\n"


def _record(measure, model, shown, view: PerRank, grades, notes) -> dict:
    """The JSON: infinite or undefined numbers are null; ``grades`` are the ranking's (null:
    unjudged), the ranks past its end have none."""
    def value(x):
        return None if not math.isfinite(x) else float(x)

    return {"measure": measure, "user": model.rule, "aggregation": model.aggregation,
            "normalised": model.normalised, "ranking": shown, "grades": grades,
            "expected_depth": value(view.expected_depth), "never_stops": view.never, "value": value(view.value),
            "upper": value(view.upper), "start_states": view.start_states,
            "cwl": {key: {"value": value(v), "residual": value(r)} for key, (v, r) in view.cwl.items()},
            "ranks": [{"rank": i + 1, "gain": value(view.gain[i]), "V": value(view.reach[i]), "C": value(view.C[i]),
                       "W": value(view.W[i]), "L": value(view.L[i])} for i in range(view.L.size)],
            "notes": notes}
