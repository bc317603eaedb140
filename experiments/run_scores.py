"""Per-topic values of many runs, read, ranked and scored a batch at a time.

``rpdi compare`` tests runs on their per-topic values alone: a (runs x topics) matrix per
measure. :func:`run_scores` reads the runs in the batches of :func:`metrics.run_files.run_batches`,
ranks and scores each batch and keeps only those values, so that memory is bounded by a batch
(the largest run, or the batch size), not by the number of runs. A run's values do not depend on
the runs it is ranked with (the topics are the qrels'), and the tie orders are drawn from
streams keyed by run and topic; but a sum over a whole ranking (nDCG, RBP without a cutoff) is
rounded by the width its rankings are padded to, the longest ranking ranked with it. So every
batch is padded to the longest ranking of all runs (:func:`metrics.rankings.deepened`), as when all runs are
ranked at once, and the values are theirs, bit for bit: each batch is padded to the longest
ranking read so far, and the batches before the one with the longest of all, padded shorter,
are read and scored a second time at the longest.

>>> from rpdi.metrics.names import parse_measure
>>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
>>> runs = {"a": {"q1": {"d1": 2.0, "x": 1.0}, "q2": {"x": 1.0}}, "b": {"q1": {"x": 1.0}, "q2": {"d2": 1.0}}}
>>> found = run_scores(qrels, runs, [parse_measure("RR")])
>>> found.runs, found.scores[0].value.tolist()
(('a', 'b'), [[1.0, 0.0], [0.0, 1.0]])
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from functools import partial
from typing import NamedTuple

import numpy as np

from rpdi.metrics.evaluate import compute, loaded
from rpdi.metrics.run_files import items_read_once, run_batches
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.rankings import deepened
from rpdi.metrics.tie_scores import TieScore, tie_scores
from rpdi.metrics.view import Score
from rpdi.simulate.api import rankings_of


class RunScores(NamedTuple):
    """The runs' names, ``present`` (S, T): whether a topic takes part in a run's mean, and per
    measure its :class:`~metrics.view.Score` (S, T) and, under ``ties`` other than trec_eval's
    order, its :class:`~metrics.tie_scores.TieScore` (else None)."""

    runs: tuple[str, ...]
    present: np.ndarray
    scores: list[Score]
    ties: list[TieScore | None]


def run_scores(qrels, runs, measures: list[Measure], topics: str = "qrels", diversity: bool = False,
               intents=None, ties: str = "trec_eval") -> RunScores:
    """Every measure's per-topic values of ``runs`` (anything :func:`metrics.run_files.run_items`
    takes) on ``qrels`` in trec_eval's order (integer grades not substituted), with ``diversity``
    on diversity qrels and ``intents``' P(i|q) (:func:`simulate.api.collection_rankings`); under
    ``ties`` ("expected", "range") also over the orders of tied documents
    (:func:`metrics.tie_scores.tie_scores`). Runs are read a batch at a time."""
    qrels, intents = loaded(qrels, diversity, "trec_eval", intents)
    runs = items_read_once(runs)
    score = partial(batch_scores, qrels, measures, topics, diversity, intents, ties)
    parts, deepest = [], 0  # each batch's scores, padded to the longest ranking so far, and that depth
    for batch in run_batches(runs):
        part, deepest = score(batch, deepest)
        parts.append((part, deepest))
        del batch  # freed before run_batches reads the next batch
    # the batches padded shorter (those before the deepest) again, padded to the deepest, as all runs
    # ranked at once: the first runs, which run_batches groups as before (a batch ends where its bytes
    # reach BATCH_BYTES, or at a run alone)
    again = sum(len(part.runs) for part, depth in parts if depth < deepest)
    redone = map(partial(score, depth=deepest), run_batches(runs[:again]))
    scores = [_same_runs(next(redone)[0], part) if depth < deepest else part for part, depth in parts]
    return RunScores(*(_stacked(list(part)) for part in zip(*scores)))


def _same_runs(again: RunScores, before: RunScores) -> RunScores:
    """``again``, a batch scored anew, which must hold the runs of ``before``."""
    if again.runs != before.runs:
        raise RuntimeError(f"runs {again.runs} scored again in place of {before.runs}: the batches have changed")
    return again


def batch_scores(qrels, measures: list[Measure], topics: str, diversity: bool, intents, ties: str,
                 runs, depth: int = 0) -> tuple:
    """:func:`run_scores` of one batch of :class:`~metrics.trec.Run` objects, ranked together
    and padded to ``depth`` at least, and the depth they are padded to."""
    rankings = rankings_of(qrels, runs, topics, diversity, intents)
    rankings = deepened(rankings, max(depth, rankings.depth))
    scores = compute(rankings, measures)
    tied = [None] * len(measures) if ties == "trec_eval" else tie_scores(rankings, measures, ties, "trec_eval", None,
                                                                          scores)
    return RunScores(rankings.runs, rankings.present, scores, tied), rankings.depth


def _stacked(parts: list):
    """The batches' parts as one along the run axis: arrays and tuples concatenated, lists and
    dataclasses (:class:`Score`, :class:`TieScore`) item by item, anything else (None, a name) as
    the first batch has it."""
    first = parts[0]
    if isinstance(first, np.ndarray):
        return np.concatenate(parts)
    if isinstance(first, tuple):
        return sum(parts, ())
    if isinstance(first, list):
        return [_stacked(list(items)) for items in zip(*parts)]
    if is_dataclass(first):
        return replace(first, **{f.name: _stacked([getattr(p, f.name) for p in parts]) for f in fields(first)})
    return first
