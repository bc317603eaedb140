"""From qrels and runs to dense (run x topic x rank) arrays, in trec_eval order.

Ranking order is trec_eval's (:mod:`metrics.line_order`): score descending, ties broken by
docno descending in byte order; the rank column and the order of lines play no part. Topics
follow ``trec_eval -c`` and ir_measures: the evaluated topics are the qrels' topics (a topic
missing from a run is an empty ranking), run topics absent from the qrels are dropped;
``topics="intersection"`` marks, per run, only the topics the run retrieved for as present.

Everything is built with vectorised joins (integer codes, hashes, ``searchsorted``); the only
string sort is over the documents whose scores tie.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cache
from typing import Sequence

import numpy as np

from rpdi.choices import TOPICS
from rpdi.metrics.errors import InputError
from rpdi.metrics.docnos import DocnoTable
from rpdi.metrics.line_order import order_run, stable_order
from rpdi.metrics.trec import Qrels, Run, every_entry, to_numpy


@dataclass(frozen=True, kw_only=True)
class Rankings:
    """Every run's ranking of every evaluated topic as padded dense arrays.

    Shapes: S runs, T topics, D = the longest ranking, M = the most judged documents of a topic.
    """

    runs: tuple[str, ...]
    topics: np.ndarray  # (T,) str, in byte order
    grade: np.ndarray  # (S, T, D) float64 grade at each rank; 0 if unjudged or past the end
    judged: np.ndarray  # (S, T, D) bool: a judgment with grade >= 0 exists
    doc: np.ndarray  # (S, T, D) int64 document code (a qrels docno's, < its count, shared across runs and topics;
    # from it on, an entry of a run's docno dictionary, which may have one per line: metrics.trec.Run); -1 past the end
    length: np.ndarray  # (S, T) int64 documents retrieved
    present: np.ndarray  # (S, T) bool: the topic takes part in the run's mean
    ideal: np.ndarray  # (T, M) float64 judged grades (>= 0) sorted descending, 0-padded
    n_judged: np.ndarray  # (T,) int64 judged documents (grade >= 0) of the topic
    max_grade: float  # the largest grade in the qrels (0 if none is positive)
    words: np.ndarray | None = None  # (S, T, D) document lengths in words (NaN: not given)
    pooled: np.ndarray | None = None  # (S, T, D) bool: in the qrels, judged or not (None: = judged)
    tie: np.ndarray | None = None  # (S, T, D) int64 id of the document's group of equal scores (the
    # 0-based rank where the group starts as read); -1 past the end; None: no two scores tie (metrics.ties)

    @property
    def depth(self) -> int:
        return self.grade.shape[2]

    @classmethod
    def of_grades(cls, grade: np.ndarray, ideal: np.ndarray, n_judged, max_grade: float, *,
                  judged: np.ndarray | None = None, length: np.ndarray | None = None,
                  runs: tuple[str, ...] | None = None, topics: np.ndarray | None = None) -> "Rankings":
        """Rankings given as arrays rather than read: ``grade`` (S, T, D), every document judged
        unless ``judged`` says otherwise, each its own document, ``length`` D unless given, every
        topic taking part; runs and topics named ``run0``.. and ``t0``.. unless given."""
        S, T, D = grade.shape
        return cls(runs=runs or tuple(f"run{s}" for s in range(S)),
                   topics=np.array([f"t{t}" for t in range(T)], dtype=object) if topics is None else topics,
                   grade=grade, judged=np.ones(grade.shape, bool) if judged is None else judged,
                   doc=np.arange(S * T * D, dtype=np.int64).reshape(S, T, D),
                   length=np.full((S, T), D) if length is None else length, present=np.ones((S, T), bool),
                   ideal=ideal, n_judged=np.asarray(n_judged), max_grade=max_grade)


def build_rankings(qrels: Qrels, runs: Sequence[Run], topics: str = "qrels",
                   float32_scores: bool = False) -> Rankings:
    """Join runs with qrels into :class:`Rankings`.

    ``topics`` is ``"qrels"`` (mean over all qrels topics; trec_eval -c) or ``"intersection"``
    (each run's mean over the qrels topics it retrieved for; plain trec_eval).
    ``float32_scores`` rounds scores to float32 before ranking, as pytrec_eval (trec_eval 9.x)
    stores them; trec_eval 10.0 keeps doubles.
    """
    import pyarrow as pa

    if topics not in TOPICS:
        raise InputError(f"topics: expected 'qrels' or 'intersection', not {topics!r}")
    if not runs:
        raise InputError("no run given")
    names = tuple(r.name for r in runs)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        sources = " and ".join(r.source for r in runs if r.name == dup)
        raise InputError(f"runs {sources} have the same name {dup!r}; name them NAME=PATH")
    nan = next((r for r in runs if np.isnan(r.score).any()), None)  # (the readers refuse them; a Run built may not)
    if nan is not None:
        raise InputError(f"run {nan.name!r} ({nan.source}): a score is not a number (NaN)")

    # topic and docno columns as dictionary arrays: the joins below work on integer codes
    columns = [(qrels.topic, qrels.docno)] + [(r.topic, r.docno) for r in runs]
    side = judgments(qrels)
    topic_ids, Nq = side.topic_ids, len(qrels.docno.dictionary)
    T = len(topic_ids)
    # the qrels' docnos have their codes, 0..Nq-1, the runs' other docnos codes from Nq on, one per
    # dictionary entry (per line for a run read alone: metrics.trec.Run). Each run's lines carry an
    # entry of ``strings`` (the dictionary whose byte order breaks ties) and ``code_of`` maps
    # entries to codes. Runs read together share one dictionary
    # (trec.read_runs): its docnos are looked up among the qrels' by hash; several dictionaries are
    # unified (unify_dictionaries needs no pyarrow.compute)
    group_of: dict[tuple, int] = {}
    group = [group_of.setdefault(_identity(d.dictionary), len(group_of)) for _, d in columns]
    distinct = [columns[group.index(g)][1].dictionary for g in range(len(group_of))]
    S = len(runs)
    # the runs sorted each on a thread of its own (numpy's sorts release the GIL), while the docnos
    # are looked up on another
    pool = _workers()
    joined = None
    if len(distinct) == 2 and side.docnos is not None:
        strings = distinct[1]
        joined = pool.submit(side.docnos.codes, strings, runs[0].docno_hashes if S == 1 else None)
        doc_codes = [None] + [to_numpy(d.indices) for _, d in columns[1:]]
    else:
        merged = pa.chunked_array([every_entry(d) for d in distinct], pa.dictionary(pa.int32(), pa.string()))
        merged = merged.unify_dictionaries()
        strings = merged.chunk(0).dictionary  # every chunk now has this one dictionary
        entry_of = [to_numpy(chunk.indices).astype(np.int64) for chunk in merged.chunks]  # per dictionary entry
        doc_codes = [entry_of[g][to_numpy(d.indices)] for g, (_, d) in zip(group, columns)]
    topic_codes = [None] + [_topic_codes(t, topic_ids) for t, _ in columns[1:]]
    # one run (rpdi eval's runs, one at a time): on this thread, whose memory is reused for the next
    each = pool.map if S > 1 else map
    per_run = list(each(lambda s: order_run(topic_codes[s + 1], doc_codes[s + 1], runs[s].score,
                                            float32_scores, T, strings), range(S)))
    code_of = None if joined is None else joined.result()
    D = max([int(np.bincount(t).max()) for t, _, _, _ in per_run if t.size] + [1])
    any_tie = any(p[3].any() for p in per_run)
    grade = np.zeros((S, T, D))
    judged = np.zeros((S, T, D), dtype=bool)
    pooled = np.zeros((S, T, D), dtype=bool)
    doc = np.full((S, T, D), -1, dtype=np.int64)
    length = np.zeros((S, T), dtype=np.int64)
    words = np.full((S, T, D), np.nan) if any(r.words is not None for r in runs) else None
    tied = np.full((S, T, D), -1, dtype=np.int64) if any_tie else None

    def fill(s: int) -> None:
        t, d, order, tie = per_run[s]  # t: the topics in ranking order
        per_run[s] = None  # the run's lines in file order, freed as soon as they are sorted
        length[s] = np.bincount(t, minlength=T)
        # the lines, sorted by topic then rank, fill each topic's first ranks: a mask in row-major order
        filled = np.arange(D) < length[s][:, None]
        if words is not None and runs[s].words is not None:
            words[s][filled] = runs[s].words[topic_codes[s + 1] >= 0][order]
        d = d[order]
        del order
        if code_of is not None:
            d = code_of[d]
        if tied is not None:
            tied[s][filled] = _group_starts(_ranks(t, T), tie)
        grade[s][filled], judged[s][filled], pooled[s][filled] = _grades(side, t, d, Nq)
        doc[s][filled] = d

    list(each(fill, range(S)))
    present = length > 0 if topics == "intersection" else np.ones((S, T), dtype=bool)
    return Rankings(runs=names, topics=topic_ids, grade=grade, judged=judged, doc=doc, length=length, present=present,
                    ideal=side.ideal, n_judged=side.n_judged, max_grade=side.max_grade, words=words, pooled=pooled,
                    tie=tied)


@cache
def _workers() -> ThreadPoolExecutor:
    """The threads :func:`build_rankings` sorts runs and looks up docnos on, started once: a
    thread started for every call cost ``rpdi eval`` of 100 runs of 50,000 lines, ranked one
    run a call, 0.17 s. A child forked from this process (``rpdi run``'s workers) starts its
    own: the threads are not forked with it."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1)


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_workers.cache_clear)


def _grades(side: "Judgments", t: np.ndarray, d: np.ndarray, Nq: int):
    """Each line's grade (0 unless judged positive), whether it is judged (grade >= 0) and
    whether it is in the qrels at all, for lines of topic codes ``t`` and document codes ``d``
    (a qrels docno's below ``Nq``): only the lines of a qrels docno are looked up."""
    grade = np.zeros(len(d))
    pooled = np.zeros(len(d), dtype=bool)
    at = np.flatnonzero(d < Nq)
    dq, tq = d[at], t[at]
    hit = side.only_topic[dq] == tq
    g = side.only_grade[dq]
    several = np.flatnonzero(side.shared[dq])
    if len(several):  # documents judged for several topics: by binary search of (topic, code)
        key = tq[several].astype(np.int64) * (Nq + 1) + dq[several]
        pos = np.minimum(np.searchsorted(side.key, key), len(side.key) - 1)
        hit[several] = side.key[pos] == key
        g[several] = side.key_grade[pos]
    pooled[at] = hit
    judged = pooled.copy()
    judged[at] &= g >= 0
    grade[at] = np.where(hit & (g > 0), g, 0.0)
    return grade, judged, pooled


@dataclass(frozen=True)
class Judgments:
    """What :func:`build_rankings` needs of the qrels alone, whatever the runs: the topics, and
    the qrels' documents (their docno dictionary's codes 0..Nq-1) by topic. A document judged
    for one topic only (the usual case) is looked up by its code (``only_topic``, ``only_grade``;
    index Nq: not in the qrels); one judged for several (``shared``), by binary search over the
    sorted integer keys topic * (Nq + 1) + code of those documents' judgments. ``only_grade`` is
    int8 where every grade is an integer from -128 to 127 (the usual -1..4), else float64: 1.4 M
    judged documents then take 1.4 MB there, not 11."""

    topic_ids: np.ndarray
    only_topic: np.ndarray
    only_grade: np.ndarray
    shared: np.ndarray
    key: np.ndarray
    key_grade: np.ndarray
    ideal: np.ndarray
    n_judged: np.ndarray
    max_grade: float
    docnos: DocnoTable | None  # the qrels' docnos by hash (None: joined by unifying dictionaries)


_JUDGMENTS: dict[int, tuple[Qrels, Judgments]] = {}  # by identity: the last qrels and its integer grades'


def judgments(qrels: Qrels) -> Judgments:
    """The qrels' :class:`Judgments`, computed once for the runs evaluated one after another
    (the last two qrels are kept: evaluate prepares rankings with a qrels and its integer grades).
    Its arrays are read-only: they are shared by every :class:`Rankings` of the qrels."""
    kept = _JUDGMENTS.get(id(qrels))
    if kept is not None and kept[0] is qrels:
        return kept[1]
    topic_ids = np.array(sorted(set(qrels.topic.dictionary.to_pylist())), dtype=object)
    T, Nq = len(topic_ids), len(qrels.docno.dictionary)
    q_topic, q_doc = _topic_codes(qrels.topic, topic_ids), to_numpy(qrels.docno.indices)  # (int32)
    shared = np.append(np.bincount(q_doc, minlength=Nq) > 1, False)
    only_topic = np.full(Nq + 1, -2, dtype=np.int32)
    only_topic[q_doc] = q_topic
    only_topic[shared] = -2
    with np.errstate(invalid="ignore"):  # (a grade NaN or out of range: not small)
        small = qrels.grade.astype(np.int8)
    small = small if np.array_equal(small, qrels.grade) else None
    only_grade = np.zeros(Nq + 1, dtype=np.float64 if small is None else np.int8)
    only_grade[q_doc] = qrels.grade if small is None else small
    del small
    several = np.flatnonzero(shared[q_doc])  # the lines of documents judged for several topics
    key = q_topic[several].astype(np.int64) * (Nq + 1) + q_doc[several]
    order = np.argsort(key)  # (the keys are distinct: the qrels have no duplicates)
    judged = qrels.grade >= 0
    ideal, n_judged = _ideal(q_topic[judged], qrels.grade[judged], T)
    top = float(np.fmax.reduce(qrels.grade, initial=0.0))  # (the largest grade; 0 if none is positive)
    side = Judgments(topic_ids, only_topic, only_grade, shared, key[order], qrels.grade[several][order], ideal,
                     n_judged, top if top > 0 else 0.0,
                     DocnoTable.of(qrels.docno.dictionary, qrels.docno_hashes))
    for array in (topic_ids, only_topic, only_grade, shared, side.key, side.key_grade, ideal, n_judged):
        array.flags.writeable = False
    while len(_JUDGMENTS) >= 2:
        del _JUDGMENTS[next(iter(_JUDGMENTS))]
    _JUDGMENTS[id(qrels)] = (qrels, side)
    return side


def truncate(rankings: Rankings, depth: int) -> Rankings:
    """Each ranking cut to its first ``depth`` documents (trec_eval -M)."""
    if depth < 1:
        raise InputError(f"documents per topic: expected a positive number, not {depth}")
    D = min(depth, rankings.depth)
    cut = lambda a: None if a is None else a[:, :, :D]
    return replace(rankings, length=np.minimum(rankings.length, D),
                   **{name: cut(getattr(rankings, name)) for name in PAST_THE_END})


def topic_block(rankings: Rankings, start: int, stop: int) -> Rankings:
    """The rankings of the topics ``start`` to ``stop`` (their indices), as views: no copies.

    >>> r = Rankings.of_grades(np.arange(12.0).reshape(2, 3, 2), np.zeros((3, 1)), [1, 1, 1], 11.0)
    >>> topic_block(r, 1, 2).grade.tolist(), topic_block(r, 1, 2).topics.tolist()
    ([[[2.0, 3.0]], [[8.0, 9.0]]], ['t1'])
    """
    per_topic = lambda a: a[start:stop]
    per_run = lambda a: None if a is None else a[:, start:stop]
    return replace(rankings, topics=per_topic(rankings.topics), ideal=per_topic(rankings.ideal),
                   n_judged=per_topic(rankings.n_judged), length=per_run(rankings.length),
                   present=per_run(rankings.present), **{name: per_run(getattr(rankings, name)) for name in PAST_THE_END})


PAST_THE_END = {"grade": 0.0, "judged": False, "doc": -1, "words": np.nan, "pooled": False, "tie": -1}
# what build_rankings puts past the end of a ranking, in each (runs, topics, ranks) array of Rankings


def deepened(rankings: Rankings, depth: int) -> Rankings:
    """The rankings padded to ``depth`` ranks, as :func:`~metrics.rankings.build_rankings` pads
    a ranking shorter than the longest it ranks.

    >>> from rpdi.metrics.evaluate import rankings_from_grades
    >>> deepened(rankings_from_grades("$-"), 4).grade.tolist()
    [[[1.0, 0.0, 0.0, 0.0]]]
    """
    if depth == rankings.depth:
        return rankings
    pad = ((0, 0), (0, 0), (0, depth - rankings.depth))
    return replace(rankings, **{name: np.pad(getattr(rankings, name), pad, constant_values=fill)
                                for name, fill in PAST_THE_END.items() if getattr(rankings, name) is not None})


def judged_only(rankings: Rankings) -> Rankings:
    """Each ranking with its unjudged documents removed, the rest moving up (trec_eval -J)."""
    keep = rankings.judged
    order = np.argsort(~keep, axis=-1, kind="stable")  # judged documents first, in rank order
    take = lambda a: None if a is None else np.take_along_axis(a, order, axis=-1)
    kept = np.take_along_axis(keep, order, axis=-1)
    return replace(rankings, grade=np.where(kept, take(rankings.grade), 0.0), judged=kept,
                   doc=np.where(kept, take(rankings.doc), -1), length=keep.sum(axis=-1),
                   words=None if rankings.words is None else np.where(kept, take(rankings.words), np.nan),
                   pooled=kept, tie=None if rankings.tie is None else np.where(kept, take(rankings.tie), -1))


def _identity(array) -> tuple:
    """The same buffers and slice mean the same array (pyarrow wraps it anew on each access)."""
    return (array.offset, len(array)) + tuple(0 if b is None else b.address for b in array.buffers())


def _ranks(t: np.ndarray, T: int) -> np.ndarray:
    """The 0-based rank within its topic of each line, the lines sorted by topic then rank."""
    rank = np.arange(len(t), dtype=np.int32 if len(t) < 2 ** 31 else np.int64)
    rank -= np.searchsorted(t, np.arange(T)).astype(rank.dtype)[t]
    return rank


def _topic_codes(column, topic_ids: np.ndarray) -> np.ndarray:
    """int32 index into the sorted ``topic_ids`` of each entry of a dictionary array; -1 if absent."""
    values = np.array(column.dictionary.to_pylist(), dtype=object)
    code = np.full(len(values), -1, dtype=np.int32)
    if len(topic_ids) and len(values):
        pos = np.minimum(np.searchsorted(topic_ids, values), len(topic_ids) - 1)
        found = topic_ids[pos] == values
        code[found] = pos[found]
    return code[to_numpy(column.indices)]


def _group_starts(rank: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """For lines sorted by topic then rank (``rank`` within the topic), each line's rank at which
    its run of equal scores starts (``tie[i]``: lines i and i + 1 tie)."""
    first = np.arange(len(rank), dtype=rank.dtype)
    first[1:][tie] = 0  # a line tied with the one above starts no run of its own
    np.maximum.accumulate(first, out=first)  # the first line of each line's run
    return rank[first]  # a run never spans two topics


def _ideal(topic_codes: np.ndarray, grades: np.ndarray, T: int):
    """Each topic's judged grades sorted descending, as a (T, M) array, and their counts: the
    negated grades as the rows of a NaN-padded matrix (as :func:`metrics.line_order.order_run`
    sorts scores), each row sorted."""
    n_judged = np.bincount(topic_codes, minlength=T).astype(np.int64)
    M = max(int(n_judged.max()) if n_judged.size else 0, 1)
    ideal = np.full((T, M), np.nan)
    ideal[np.arange(M) < n_judged[:, None]] = -grades[stable_order(topic_codes)]
    ideal.sort(axis=1)  # NaN last
    np.negative(ideal, out=ideal)
    ideal[np.isnan(ideal)] = 0.0
    return ideal, n_judged
