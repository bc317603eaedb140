"""Evaluate runs against qrels: the API behind ``rpdi eval``."""

from __future__ import annotations

import os
from typing import Iterable, Mapping, Sequence

import numpy as np

from rpdi.metrics.measures import Measure, parse_measure
from rpdi.metrics.rankings import Rankings, build_rankings
from rpdi.metrics.trec import InputError, Qrels, Run, qrels_from_dict, read_qrels, read_run, run_from_dict
from rpdi.metrics.view import Score, View


def load_qrels(qrels) -> Qrels:
    """A path, a :class:`Qrels`, or ``{topic: {docno: grade}}``."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, Mapping):
        return qrels_from_dict(qrels)
    return read_qrels(qrels)


def load_runs(runs) -> list[Run]:
    """Paths, :class:`Run` objects, or ``{name: {topic: {docno: score}}}``."""
    if isinstance(runs, Mapping):
        return [run_from_dict(name, scores) for name, scores in runs.items()]
    if isinstance(runs, (str, os.PathLike, Run)):
        runs = [runs]
    runs = list(runs)
    if sum(not isinstance(r, Run) for r in runs) < 2:
        return [r if isinstance(r, Run) else read_run(r) for r in runs]
    from concurrent.futures import ThreadPoolExecutor

    # files are parsed concurrently, each on one thread (pyarrow releases the GIL); the first
    # bad file in the order given is the one reported
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(lambda r: r if isinstance(r, Run) else read_run(r, threads=False), runs))


def compute(rankings: Rankings, measures: Sequence[Measure]) -> list[Score]:
    """Each measure's :class:`Score` over the rankings; views are shared between equal depths."""
    views: dict[int | None, View] = {}
    scores = []
    for m in measures:
        if m.spec.between_runs and len(rankings.runs) < 2:
            raise InputError(f"measure {m.text!r}: compares runs with the first run given; give two or more runs")
        view = views.get(m.depth) or views.setdefault(m.depth, View(rankings, m.depth))
        scores.append(m.compute(view))
    return scores


def evaluate(qrels, runs, measures: Iterable[str | Measure], *, per_topic: bool = False,
             topics: str = "qrels", undefined: str = "zero", average: str = "macro",
             float32_scores: bool = False) -> list[dict]:
    """Evaluate runs with closed-form measures; a list of flat records.

    Each record is ``{"run", "topic", "measure", "value", "residual"}``: one per (run, measure)
    with topic ``"all"`` (the mean over the evaluated topics) and, with ``per_topic``, one per
    topic before it. ``undefined="zero"`` reports undefined values (R = 0 for normalised
    measures) as 0 like trec_eval, ``"null"`` as None and leaves them out of the mean.
    ``average="micro"`` pools the numerators and denominators of ratio measures (P, R, ...).

    >>> evaluate({"q1": {"a": 1, "b": 0}}, {"sys": {"q1": {"a": 2.0, "b": 1.0}}}, ["P@2", "RR"])
    [{'run': 'sys', 'topic': 'all', 'measure': 'P@2', 'value': 0.5, 'residual': None}, \
{'run': 'sys', 'topic': 'all', 'measure': 'RR', 'value': 1.0, 'residual': None}]
    """
    if undefined not in ("zero", "null"):
        raise InputError(f"undefined: expected 'zero' or 'null', not {undefined!r}")
    if average not in ("macro", "micro"):
        raise InputError(f"average: expected 'macro' or 'micro', not {average!r}")
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    if not parsed:
        raise InputError("no measure given")
    if average == "micro":
        bad = [m.text for m in parsed if not m.spec.micro]
        if bad:
            raise InputError(f"measure {bad[0]!r}: has no micro-average (only ratio measures: P, R, SetP, SetR, Fallout)")
    rankings = build_rankings(load_qrels(qrels), load_runs(runs), topics, float32_scores)
    scores = compute(rankings, parsed)
    records = []
    for s, run in enumerate(rankings.runs):
        present = rankings.present[s]
        for m, score in zip(parsed, scores):
            value = score.value[s]
            residual = None if score.residual is None else score.residual[s]
            if per_topic:
                for t in np.flatnonzero(present):
                    records.append(_record(run, rankings.topics[t], m.text, value[t],
                                           None if residual is None else residual[t], undefined))
            if average == "micro":
                mean = _ratio(score.num[s][present].sum(), score.den[s][present].sum())
            else:
                kept = value[present]
                kept = np.nan_to_num(kept) if undefined == "zero" else kept[~np.isnan(kept)]
                mean = float(kept.mean()) if kept.size else np.nan
            mean_res = None if residual is None else float(residual[present].mean()) if present.any() else None
            records.append(_record(run, "all", m.text, mean, mean_res, undefined))
    return records


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den else np.nan


def _record(run, topic, measure, value, residual, undefined) -> dict:
    value = float(value)
    if np.isnan(value):
        value = 0.0 if undefined == "zero" else None
    return {"run": run, "topic": str(topic), "measure": measure, "value": value,
            "residual": None if residual is None else float(residual)}


def rankings_from_grades(grades, judged=None, R: int | None = None, judged_grades=None,
                         max_grade: float | None = None) -> Rankings:
    """:class:`Rankings` for one ranking given as grades (a list, or a string of ``$``, ``-``, ``?``).

    ``$`` is relevant (1), ``-`` judged non-relevant (0), ``?`` unjudged. The topic's judged grades
    default to the ranking's own; ``R`` adds unretrieved relevant documents (grade 1) up to R, and
    ``judged_grades`` gives the topic's judged grades outright.
    """
    if isinstance(grades, str):
        judged = [c != "?" for c in grades]
        grades = [1.0 if c == "$" else 0.0 for c in grades]
    g = np.asarray(grades, dtype=np.float64)
    j = np.ones(g.shape, bool) if judged is None else np.asarray(judged, bool)
    g = np.where(j, g, 0.0)
    if judged_grades is None:
        judged_grades = list(g[j])
        missing = 0 if R is None else R - int((g[j] >= 1).sum())
        if missing < 0:
            raise ValueError("R is smaller than the relevant documents in the ranking")
        judged_grades += [1.0] * missing
    ideal = -np.sort(-np.asarray(judged_grades, dtype=np.float64))
    top = float(ideal.max(initial=0.0)) if max_grade is None else max_grade
    n = len(g)
    return Rankings(("run",), np.array(["q"], dtype=object), g.reshape(1, 1, n), j.reshape(1, 1, n),
                    np.arange(n, dtype=np.int64).reshape(1, 1, n), np.array([[n]]),
                    np.ones((1, 1), bool), ideal.reshape(1, -1) if ideal.size else np.zeros((1, 1)),
                    np.array([ideal.size]), top)


def score(measure: str, grades, **kwargs) -> float:
    """One measure on one ranking given as grades (see :func:`rankings_from_grades`).

    >>> round(score("RBP(p=0.8)", "$$---$----$-----$---"), 4)
    0.4526
    """
    m = parse_measure(measure)
    value = m.compute(View(rankings_from_grades(grades, **kwargs), m.depth)).value[0, 0]
    return float(value)
