"""Evaluate runs against qrels: the API behind ``rpdi eval``."""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Iterable, Mapping, Sequence

import numpy as np

from rpdi.choices import AVERAGES, COMPAT, UNDEFINED
from rpdi.metrics.diversity import (DiversityQrels, IntentProbabilities, diversity_rankings, intents_from_dict,
                                   read_diversity_qrels, read_intents)
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.names import parse_measure
from rpdi.metrics.records import records_frame
from rpdi.metrics.rankings import Rankings, build_rankings, judgments, topic_block, truncate
from rpdi.metrics.rankings import judged_only as judged_only_rankings
from rpdi.metrics.errors import InputError
from rpdi.metrics.frames import diversity_qrels_from_table, qrels_from, read_table_file
from rpdi.metrics.sessions import check_session_call, given_sessions, session_records
from rpdi.metrics.run_files import load_runs, run_batches
from rpdi.metrics.trec import Qrels
from rpdi.metrics.tie_scores import check_average, check_ties, tie_fields, tie_scores
from rpdi.metrics.trec_names import trec_lines
from rpdi.metrics.view import Score, View


def load_qrels(qrels) -> Qrels:
    """A path (TREC qrels, TSV/CSV with a header row or parquet; ``-``: standard input),
    ``irds:DATASET_ID``, a :class:`Qrels`, a DataFrame or pyarrow Table (ir_measures', ranx's or
    PyTerrier's column names), ir_measures ``Qrel`` namedtuples, ``{topic: {docno: grade}}``, or
    :class:`~metrics.diversity.DiversityQrels` (each document's largest grade over the
    subtopics): :func:`metrics.frames.qrels_from`. Diversity qrels as a dict ``{topic:
    {subtopic: {docno: grade}}}`` raise a one-line InputError: only :func:`load_diversity_qrels`
    (a diversity or intent-aware measure evaluated) reads them."""
    return qrels_from(qrels)


def load_diversity_qrels(qrels) -> DiversityQrels:
    """A path (``-``: standard input) of ``topic subtopic docno judgment`` lines or a TSV/CSV
    (header row) or parquet file, a :class:`~metrics.diversity.DiversityQrels`, a DataFrame,
    pyarrow Table or ``Qrel`` namedtuples with a ``subtopic`` (else ``iteration``) column
    (:func:`metrics.frames.diversity_qrels_from_table`), or ``{topic: {subtopic: {docno: grade}}}``."""
    if isinstance(qrels, DiversityQrels):
        return qrels
    if isinstance(qrels, Qrels):
        raise InputError(f"{qrels.source}: read as plain qrels (topic iter docno grade); the diversity and "
                         f"intent-aware measures need its subtopics: give the file's path or a DiversityQrels")
    if isinstance(qrels, Mapping):
        rows = []
        for topic, per in qrels.items():
            if not isinstance(per, Mapping) or not all(isinstance(d, Mapping) for d in per.values()):
                raise InputError(f"<qrels>: topic {topic}: expected {{subtopic: {{docno: grade}}}}")
            rows += [(str(topic), str(sub), str(doc), g) for sub, docs in per.items() for doc, g in docs.items()]
        try:
            grade = np.array([float(r[3]) for r in rows], dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("<qrels>: a grade is not a number") from None
        if not rows or not np.isfinite(grade).all():
            raise InputError("<qrels>: empty, or a grade is not finite")
        return DiversityQrels([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], grade)
    if not isinstance(qrels, (str, os.PathLike)):
        return diversity_qrels_from_table(qrels)
    table = read_table_file(os.fspath(qrels))
    return read_diversity_qrels(qrels) if table is None else diversity_qrels_from_table(table, os.fspath(qrels))


def load_intents(intents) -> IntentProbabilities | None:
    """None (uniform intents), a path of ``topic subtopic probability`` lines, an
    :class:`~metrics.diversity.IntentProbabilities`, or ``{topic: {subtopic: probability}}``."""
    if intents is None or isinstance(intents, IntentProbabilities):
        return intents
    if isinstance(intents, Mapping):
        return intents_from_dict(intents)
    return read_intents(intents)


COMPUTE_CELLS = 1 << 18  # (run, topic, rank) cells of rankings the measures are computed over at a time


def compute(rankings: Rankings, measures: Sequence[Measure], compat: str = "trec_eval",
            integer_rankings: Rankings | None = None) -> list[Score]:
    """Each measure's :class:`Score` over the rankings (over ``integer_rankings``, the same with
    integer grades, for measures named as trec_eval names them, if the grades have fractions);
    views are shared between equal depths.

    A topic's values do not depend on the other topics': plain :class:`Rankings` are computed
    over as many topics at a time as fill :data:`COMPUTE_CELLS` cells (:func:`topic_block`), so
    that the measures' temporaries stay a few MB whatever the number of topics (20 MiB less at the
    peak of ``rpdi eval`` at 10 x 6,980 x 100: tests/benchmarks/eval_scale.py). The rankings of
    other kinds (diversity, sessions, a model's own) and measures between runs, all at once."""
    S, T, D = rankings.grade.shape
    step = max(COMPUTE_CELLS // max(S * D, 1), 1)
    if step >= T or type(rankings) is not Rankings or any(m.spec.between_runs for m in measures):
        return _scores(rankings, measures, compat, integer_rankings)
    blocks = [_scores(topic_block(rankings, start, start + step), measures, compat,
                      None if integer_rankings is None else topic_block(integer_rankings, start, start + step))
              for start in range(0, T, step)]
    return [_joined([block[i] for block in blocks]) for i in range(len(measures))]


def _joined(scores: list[Score]) -> Score:
    """The scores of consecutive blocks of topics as one."""
    join = lambda arrays: None if arrays[0] is None else np.concatenate(arrays, axis=1)
    return Score(**{f.name: join([getattr(s, f.name) for s in scores]) for f in fields(Score)})


def _scores(rankings: Rankings, measures: Sequence[Measure], compat: str,
            integer_rankings: Rankings | None) -> list[Score]:
    """:func:`compute` of all the topics at once."""
    views: dict[tuple[bool, int | None], View] = {}
    scores = []
    for m in measures:
        if m.spec.between_runs and len(rankings.runs) < 2:
            raise InputError(f"measure {m.text!r}: compares runs with the first run given; give two or more runs")
        integer = m.integer_grades and integer_rankings is not None
        key = (integer, m.depth)
        if key not in views:
            views[key] = View(integer_rankings if integer else rankings, m.depth, compat)
        scores.append(m.compute(views[key]))
    return scores


def expand(names: Iterable[str | Measure], level: float = 1, docs: float = 0.0) -> list[Measure]:
    """Measures from names: rpdi's (``P@10``), ir_measures' (``MAP``, an ir_measures Measure),
    trec_eval's (``P_10``, a family ``P``, ``P.5,10``, ``all_trec``) with trec_eval's -l ``level``
    and -N ``docs``. Unknown names raise InputError."""
    out = []
    for name in names:
        if isinstance(name, Measure):
            out.append(name)
            continue
        if not isinstance(name, str):  # an ir_measures Measure (parse_measure reads its name)
            out.append(parse_measure(name))
            continue
        lines = trec_lines(name, level, docs, strict=False)
        if lines is None:
            out.append(parse_measure(name))
        else:
            out += [line.measure for line in lines if line.measure is not None]
    return out


def prepare(qrels, runs, topics: str = "qrels", compat: str = "trec_eval", max_docs: int | None = None,
            judged_only: bool = False, diversity: bool = False, intents=None) -> tuple[Rankings, Rankings | None]:
    """The rankings evaluated: trec_eval's order (float32 scores under ``compat="pytrec_eval"``),
    cut to ``max_docs`` a topic (trec_eval -M), without unjudged documents if ``judged_only``
    (trec_eval -J); and, if some grade has a fraction, the same rankings with trec_eval's integer
    grades (their integer part; a grade written with an exponent as strtol reads it), else None.
    With ``diversity`` the qrels are diversity qrels and the rankings carry their subtopics and
    the ``intents``' probabilities (:func:`~metrics.diversity.diversity_rankings`)."""
    return preparer(qrels, topics, compat, max_docs, judged_only, diversity, intents)(runs)


def preparer(qrels, topics: str = "qrels", compat: str = "trec_eval", max_docs: int | None = None,
             judged_only: bool = False, diversity: bool = False, intents=None):
    """:func:`prepare` for one batch of runs after another (:func:`run_batches`): a function of
    the runs, the qrels read and given integer grades once (:func:`loaded`,
    :func:`integer_grades`), so that every batch ranks against the same qrels objects, whose
    judgments are then found once (:func:`metrics.rankings.build_rankings` keeps them by identity):
    now, before the first batch is read (``rpdi eval`` reads its first run on a thread meanwhile
    if it is larger than the qrels file, :meth:`metrics.run_files.RunFile.read_ahead`)."""
    qrels, intents = loaded(qrels, diversity, compat, intents)
    integer = integer_grades(qrels)
    for q in () if diversity else (qrels, integer):
        if q is not None:
            judgments(q)

    def build(q, runs) -> Rankings:
        if diversity:
            rankings = diversity_rankings(q, runs, topics, float32_scores=compat == "pytrec_eval", intents=intents)
        else:
            rankings = build_rankings(q, runs, topics, float32_scores=compat == "pytrec_eval")
        if judged_only:
            rankings = judged_only_rankings(rankings)
        return rankings if max_docs is None else truncate(rankings, max_docs)

    def prepared(runs) -> tuple[Rankings, Rankings | None]:
        runs = load_runs(runs)
        return build(qrels, runs), None if integer is None else build(integer, runs)

    return prepared


def integer_grades(qrels: Qrels | DiversityQrels) -> Qrels | DiversityQrels | None:
    """The qrels with trec_eval's integer grades (their integer part; a grade written with an
    exponent as strtol reads it), or None if those are the grades.

    >>> integer_grades(load_qrels({"q": {"a": 1.5, "b": 1}})).grade.tolist(), integer_grades(load_qrels({"q": {"a": 2}}))
    ([1.0, 1.0], None)
    """
    whole = np.trunc(qrels.grade) if isinstance(qrels, DiversityQrels) or qrels.whole is None else qrels.whole
    if np.array_equal(whole, qrels.grade):
        return None
    if isinstance(qrels, DiversityQrels):
        return DiversityQrels(qrels.topic, qrels.subtopic, qrels.docno, whole, qrels.source)
    return Qrels(qrels.topic, qrels.docno, whole, qrels.source, docno_hashes=qrels.docno_hashes)


def _check_prepare(compat: str, diversity: bool, intents) -> None:
    if compat not in COMPAT:
        raise InputError(f"compat: expected one of {', '.join(COMPAT)}, not {compat!r}")
    if intents is not None and not diversity:
        raise InputError("intents: given, but no diversity or intent-aware measure (X-IA) reads them")


def loaded(qrels, diversity: bool, compat: str, intents):
    """The qrels and intents read once, to rank one batch of runs after another
    (:func:`run_batches`; :func:`preparer`)."""
    _check_prepare(compat, diversity, intents)
    return load_diversity_qrels(qrels) if diversity else load_qrels(qrels), load_intents(intents)


def evaluate(qrels, runs, measures: Iterable[str | Measure], *, per_topic: bool = False,
             topics: str = "qrels", undefined: str = "zero", average: str = "macro",
             compat: str = "trec_eval", max_docs: int | None = None, judged_only: bool = False,
             relevance_level: float = 1, intents=None, ties: str = "trec_eval", sessions=None,
             as_frame: bool = False):
    """Evaluate runs with measures; a list of flat records, or with ``as_frame`` a pandas
    DataFrame of them with typed columns (:func:`metrics.records.records_frame`).

    ``qrels`` and ``runs`` are anything :func:`load_qrels` and :func:`run_items` take: files'
    paths (TREC, TSV/CSV with a header row, parquet; run files read one after another),
    DataFrames with ir_measures' or ranx's column names, dicts, ...

    Each record is ``{"run", "topic", "measure", "value", "residual", "method"}``: one per (run, measure)
    with topic ``"all"`` (the mean over the evaluated topics; the sum for counts, the geometric
    mean for gm_map and gm_bpref) and, with ``per_topic``, one per topic before it.
    ``undefined="zero"`` reports undefined values (R = 0 for normalised measures) as 0 like
    trec_eval, ``"null"`` as None and leaves them out of the mean. ``average="micro"`` pools the
    numerators and denominators of ratio measures (P, R, ...). ``compat="pytrec_eval"`` gives
    trec_eval 9.x's numbers as pytrec_eval computes them (float32 scores, the old interpolation
    rule); ``max_docs``, ``judged_only`` and ``relevance_level`` are trec_eval's -M, -J and -l.
    ``method`` says how the value was found: ``closed_form``, or ``exact`` for a measure declared
    by its browsing model alone (its exact expectation; :mod:`usermodels.scoring`, through which
    ``rpdi.evaluate`` also takes models of one's own).

    The diversity measures (ndeval's ``alpha-nDCG@20``, ``ERR-IA@20``, ...; ir_measures'
    ``alpha_nDCG@20``, ...) and any measure read by intent-drawing users (``X-IA``: ``RBP-IA``)
    read the qrels as diversity qrels (``topic subtopic docno judgment``, see
    :mod:`metrics.diversity`; a dict ``{topic: {subtopic: {docno: grade}}}``), and ``intents``
    (a path of ``topic subtopic probability`` lines or ``{topic: {subtopic: probability}}``) gives
    P(i|q), uniform over a topic's subtopics with a relevant document by default. The other
    measures then see a document's largest grade over the subtopics.

    ``ties``: ``trec_eval`` (default; equal scores ordered by docno, descending), ``expected``
    (each value the expectation over uniformly random orders of the tie groups) or ``range``
    (trec_eval's value, with ``low`` and ``high`` over those orders); records then say how in
    ``ties`` (:mod:`metrics.tie_scores`).

    Session measures (``sRBP(p=0.8,b=0.6)@10``, ``sDCG(bq=4)@10``) read each session's turns end
    to end, ``sessions`` a session file's path or a :class:`~metrics.sessions.Sessions` (default:
    the CAsT ids ``SESSION_TURN`` of the qrels' topics); records are then per session (``topic``
    the session) and ``all`` the mean over sessions (:func:`~metrics.sessions.session_records`).
    Session and single-query measures are not evaluated in one call.

    >>> evaluate({"q1": {"a": 1, "b": 0}}, {"sys": {"q1": {"a": 2.0, "b": 1.0}}}, ["P@2", "recip_rank"])
    [{'run': 'sys', 'topic': 'all', 'measure': 'P@2', 'value': 0.5, 'residual': None, 'method': 'closed_form'}, \
{'run': 'sys', 'topic': 'all', 'measure': 'recip_rank', 'value': 1.0, 'residual': None, 'method': 'closed_form'}]
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    >>> run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> evaluate(qrels, run, ["P@2"], as_frame=True)[["run", "measure", "value"]]
       run measure  value
    0  run     P@2    0.5
    """
    if undefined not in UNDEFINED:
        raise InputError(f"undefined: expected one of {', '.join(UNDEFINED)}, not {undefined!r}")
    if average not in AVERAGES:
        raise InputError(f"average: expected one of {', '.join(AVERAGES)}, not {average!r}")
    check_ties(ties)
    check_average(ties, average)
    parsed = expand(measures, relevance_level)
    if not parsed:
        raise InputError("no measure given")
    if average == "micro":
        bad = [m.text for m in parsed if not m.spec.micro]
        if bad:
            raise InputError(f"measure {bad[0]!r}: has no micro-average (only ratio measures: P, R, SetP, SetR, Fallout)")
    if check_session_call(parsed, sessions, ties, average, intents):
        runs = load_runs(runs)
        rankings, _ = prepare(qrels, runs, topics, compat, max_docs, judged_only)
        found = given_sessions(sessions, rankings.topics, runs)
        records = session_records(rankings, parsed, found, per_topic, undefined)
        return records_frame(records) if as_frame else records
    diversity = any(m.spec.intents for m in parsed)
    prepared = preparer(qrels, topics, compat, max_docs, judged_only, diversity, intents)
    records, done = [], set()  # (a run compared with the first is ranked with it: the first's records once)
    for batch in run_batches(runs, parsed, together=False):
        rankings, integer_rankings = prepared(batch)
        del batch  # the runs' lines freed before the measures are computed
        which = [s for s, name in enumerate(rankings.runs) if name not in done]
        records += _records(rankings, integer_rankings, parsed, per_topic, undefined, average, compat, ties, which)
        done.update(rankings.runs)
        del rankings, integer_rankings  # freed before the next batch is read
    return records_frame(records) if as_frame else records


def _records(rankings: Rankings, integer_rankings: Rankings | None, parsed: list[Measure], per_topic: bool,
             undefined: str, average: str, compat: str, ties: str, which: Sequence[int] | None = None) -> list[dict]:
    """:func:`evaluate`'s records of the runs ``which`` (indices; None: all) of ``rankings``."""
    scores = compute(rankings, parsed, compat, integer_rankings)
    tied = [None] * len(parsed)
    if ties != "trec_eval":
        tied = tie_scores(rankings, parsed, ties, compat, integer_rankings, scores)
        scores = [tie.score for tie in tied]
    macro = [_aggregate(score.value, rankings.present, m.spec.average, undefined) if average == "macro" else None
             for m, score in zip(parsed, scores)]
    records = []
    for s in range(len(rankings.runs)) if which is None else which:
        run = rankings.runs[s]
        present = rankings.present[s]
        for m, score, means, tie in zip(parsed, scores, macro, tied):
            value = score.value[s]
            residual = None if score.residual is None else score.residual[s]
            if per_topic:
                for t in np.flatnonzero(present):
                    records.append(_record(run, rankings.topics[t], m, value[t],
                                           None if residual is None else residual[t], undefined)
                                   | tie_fields(tie, s, t, present, m.spec.average, undefined))
            mean = means[s] if means is not None else _ratio(score.num[s][present].sum(), score.den[s][present].sum())
            mean_res = None if residual is None else float(residual[present].mean()) if present.any() else None
            records.append(_record(run, "all", m, mean, mean_res, undefined)
                           | tie_fields(tie, s, None, present, m.spec.average, undefined))
    return records


MIN_GEO_MEAN = 0.00001  # trec_eval's floor for a topic's value in a geometric mean


def _aggregate(values: np.ndarray, present: np.ndarray, how: str, undefined: str = "zero") -> np.ndarray:
    """Each run's values (S, T) over its topics ``present`` (S, T) as one: their mean, sum or
    geometric mean (each value at least 0.00001, trec_eval's gm_map); NaN for a run with none.
    Sums run over the topics in order, as trec_eval adds them (numpy's pairwise sum can differ in
    the last bit, which shows at 4 decimals on an edge); a topic left out adds 0.0, which changes
    no partial sum. ``undefined="zero"`` counts an undefined (NaN) value as 0, "null" leaves it out.

    >>> _aggregate(np.array([[0.5, np.nan, 0.25]]), np.array([[True, True, False]]), "mean").tolist()
    [0.25]
    """
    kept = present & ~np.isnan(values) if undefined == "null" else present
    x = np.where(kept, np.nan_to_num(values) if undefined == "zero" else values, 0.0)
    if how == "geometric":
        x = np.where(kept, np.log(np.maximum(x, MIN_GEO_MEAN)), 0.0)
    n = kept.sum(axis=-1)
    total = np.cumsum(x, axis=-1)[..., -1] if x.shape[-1] else np.zeros(x.shape[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        value = total if how == "sum" else total / n
    return np.where(n > 0, np.exp(value) if how == "geometric" else value, np.nan)


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den else np.nan


def _record(run, topic, measure: Measure, value, residual, undefined) -> dict:
    value = float(value)
    if np.isnan(value):
        value = 0.0 if undefined == "zero" else None
    return {"run": run, "topic": str(topic), "measure": measure.text, "value": value,
            "residual": None if residual is None else float(residual), "method": measure.spec.method}


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
    if np.isnan(g).any():  # a None among the grades: NaN would silently spread through every measure
        raise InputError("grades must be numbers: mark unjudged documents with judged=[...] or '?'")
    j = np.ones(g.shape, bool) if judged is None else np.asarray(judged, bool)
    g = np.where(j, g, 0.0)
    if judged_grades is None:
        judged_grades = list(g[j])
        missing = 0 if R is None else R - int((g[j] >= 1).sum())
        if missing < 0:
            raise InputError(f"R={R} is smaller than the {R - missing} relevant documents in the ranking")
        judged_grades += [1.0] * missing
    ideal = -np.sort(-np.asarray(judged_grades, dtype=np.float64))
    top = float(ideal.max(initial=0.0)) if max_grade is None else max_grade
    return Rankings.of_grades(g.reshape(1, 1, -1), ideal.reshape(1, -1) if ideal.size else np.zeros((1, 1)),
                              [ideal.size], top, judged=j.reshape(1, 1, -1), runs=("run",),
                              topics=np.array(["q"], dtype=object))


def score(measure: str | Measure, grades, compat: str = "trec_eval", **kwargs) -> float:
    """One measure on one ranking given as grades (see :func:`rankings_from_grades`);
    ``compat="pytrec_eval"`` for trec_eval 9.x's interpolation rule.

    >>> round(score("RBP(p=0.8)", "$$---$----$-----$---"), 4)
    0.4526
    """
    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    value = m.compute(View(rankings_from_grades(grades, **kwargs), m.depth, compat)).value[0, 0]
    return float(value)
