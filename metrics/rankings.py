"""From qrels and runs to dense (run x topic x rank) arrays, in trec_eval order.

Ranking order is trec_eval's: score descending, ties broken by docno descending in byte
order; the rank column and the order of lines play no part. Topics follow ``trec_eval -c`` and
ir_measures: the evaluated topics are the qrels' topics (a topic missing from a run is an empty
ranking), run topics absent from the qrels are dropped; ``topics="intersection"`` marks, per
run, only the topics the run retrieved for as present.

Everything is built with vectorised joins (integer codes, ``searchsorted``, ``lexsort``); the
only string sort is over the documents whose scores tie.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from metrics.trec import InputError, Qrels, Run


@dataclass(frozen=True)
class Rankings:
    """Every run's ranking of every evaluated topic as padded dense arrays.

    Shapes: S runs, T topics, D = the longest ranking, M = the most judged documents of a topic.
    """

    runs: tuple[str, ...]
    topics: np.ndarray  # (T,) str, in byte order
    grade: np.ndarray  # (S, T, D) float64 grade at each rank; 0 if unjudged or past the end
    judged: np.ndarray  # (S, T, D) bool: a judgment with grade >= 0 exists
    doc: np.ndarray  # (S, T, D) int64 document code (shared across runs); -1 past the end
    length: np.ndarray  # (S, T) int64 documents retrieved
    present: np.ndarray  # (S, T) bool: the topic takes part in the run's mean
    ideal: np.ndarray  # (T, M) float64 judged grades (>= 0) sorted descending, 0-padded
    n_judged: np.ndarray  # (T,) int64 judged documents (grade >= 0) of the topic
    max_grade: float  # the largest grade in the qrels (0 if none is positive)

    @property
    def depth(self) -> int:
        return self.grade.shape[2]


def build_rankings(qrels: Qrels, runs: Sequence[Run], topics: str = "qrels",
                   float32_scores: bool = False) -> Rankings:
    """Join runs with qrels into :class:`Rankings`.

    ``topics`` is ``"qrels"`` (mean over all qrels topics; trec_eval -c) or ``"intersection"``
    (each run's mean over the qrels topics it retrieved for; plain trec_eval).
    ``float32_scores`` rounds scores to float32 before ranking, as trec_eval stores them.
    """
    import pandas as pd

    if topics not in ("qrels", "intersection"):
        raise InputError(f"topics: expected 'qrels' or 'intersection', not {topics!r}")
    if not runs:
        raise InputError("no run given")
    names = tuple(r.name for r in runs)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"{dup}: two runs have the same name")

    topic_ids = np.array(sorted(set(qrels.topic.tolist())), dtype=object)
    topic_index = pd.Index(topic_ids)
    all_docs = np.concatenate([qrels.docno] + [r.docno for r in runs])
    doc_codes, _ = pd.factorize(all_docs)
    n_docs = int(doc_codes.max()) + 1
    T = len(topic_ids)

    # qrels: sorted integer keys topic * n_docs + doc for the join
    q_topic = topic_index.get_indexer(qrels.topic)
    q_doc = doc_codes[: len(qrels.docno)]
    q_key = q_topic.astype(np.int64) * n_docs + q_doc
    q_order = np.argsort(q_key, kind="stable")
    q_key, q_grade = q_key[q_order], qrels.grade[q_order]

    judged_mask = qrels.grade >= 0
    ideal, n_judged = _ideal(q_topic[judged_mask], qrels.grade[judged_mask], T)
    positive = qrels.grade[qrels.grade > 0]
    max_grade = float(positive.max()) if positive.size else 0.0

    per_run = []
    offset = len(qrels.docno)
    for run in runs:
        codes = doc_codes[offset: offset + len(run.docno)]
        offset += len(run.docno)
        per_run.append(_order_run(run, codes, topic_index, float32_scores))
    D = max([int(rank.max()) + 1 for _, rank, _ in per_run if rank.size] + [1])

    S = len(runs)
    grade = np.zeros((S, T, D))
    judged = np.zeros((S, T, D), dtype=bool)
    doc = np.full((S, T, D), -1, dtype=np.int64)
    length = np.zeros((S, T), dtype=np.int64)
    for s, (t, rank, d) in enumerate(per_run):
        key = t.astype(np.int64) * n_docs + d
        pos = np.searchsorted(q_key, key)
        pos_c = np.minimum(pos, len(q_key) - 1)
        hit = q_key[pos_c] == key
        g = np.where(hit, q_grade[pos_c], np.nan)
        judged[s, t, rank] = hit & (g >= 0)
        grade[s, t, rank] = np.where(hit & (g > 0), g, 0.0)
        doc[s, t, rank] = d
        length[s] = np.bincount(t, minlength=T)
    present = length > 0 if topics == "intersection" else np.ones((S, T), dtype=bool)
    return Rankings(names, topic_ids, grade, judged, doc, length, present, ideal, n_judged, max_grade)


def _order_run(run: Run, codes: np.ndarray, topic_index, float32_scores: bool):
    """Topic codes, 0-based ranks and document codes of the run's evaluated lines."""
    t = topic_index.get_indexer(run.topic)
    keep = t >= 0
    t, d, score, names = t[keep], codes[keep], run.score[keep], run.docno[keep]
    if float32_scores:
        score = score.astype(np.float32).astype(np.float64)
    order = np.lexsort((-score, t))
    ts, ss = t[order], score[order]
    tie = (ts[1:] == ts[:-1]) & (ss[1:] == ss[:-1])
    if tie.any():
        member = np.zeros(len(order), dtype=bool)
        member[1:] |= tie
        member[:-1] |= tie
        idx = np.flatnonzero(member)
        group = np.cumsum(np.concatenate(([True], ~tie)))[idx]
        tied_names = names[order[idx]].astype(str)
        _, byte_rank = np.unique(tied_names, return_inverse=True)
        order[idx] = order[idx][np.lexsort((-byte_rank, group))]
        ts = t[order]
    starts = np.searchsorted(ts, np.arange(len(topic_index)))
    rank = np.arange(len(ts)) - starts[ts]
    return ts, rank, d[order]


def _ideal(topic_codes: np.ndarray, grades: np.ndarray, T: int):
    """Each topic's judged grades sorted descending, as a (T, M) array, and their counts."""
    n_judged = np.bincount(topic_codes, minlength=T).astype(np.int64)
    M = max(int(n_judged.max()) if n_judged.size else 0, 1)
    order = np.lexsort((-grades, topic_codes))
    tc, g = topic_codes[order], grades[order]
    starts = np.searchsorted(tc, np.arange(T))
    ideal = np.zeros((T, M))
    ideal[tc, np.arange(len(tc)) - starts[tc]] = g
    return ideal, n_judged
