"""Diversity judgments: users with different intents, as ndeval and ir_measures read them.

A diversity qrels file has ndeval's lines ``topic subtopic docno judgment``: TREC qrels whose
second column names the subtopic (an intent of the query) the judgment is for. An intent
probabilities file has lines ``topic subtopic probability`` giving P(i|q); by default the intents
of a topic are equally likely, over the subtopics with a relevant document (ndeval's "actual
subtopics"). Both are read by :mod:`metrics.trec`'s readers.

The judgments join the rankings through the document codes of
:class:`~metrics.rankings.Rankings`: :func:`diversity_rankings` reads the runs against the
topic-level qrels (a document's grade for the topic is its largest grade over the subtopics, the
grade ad-hoc measures see) and adds an :class:`Intents` table that gives, for any array of
document codes, every subtopic's grade (:meth:`Intents.grades`, shape (..., I)). Because the
lookup goes by document code, the rankings cut to a depth or stripped of unjudged documents
(:func:`~metrics.rankings.truncate`, :func:`~metrics.rankings.judged_only`) keep their subtopic
grades. :meth:`Intents.per_intent` lays the same rankings out with one "topic" per
(topic, intent) pair, so that any single-intent measure or user reads one intent's grades.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "div.qrels").write_text("1 1 a 1\\n1 2 a 0\\n1 2 b 1\\n1 3 c 0\\n")
>>> _ = (d / "r.run").write_text("1 Q0 b 1 3.0 r\\n1 Q0 a 2 2.0 r\\n1 Q0 x 3 1.0 r\\n")
>>> from rpdi.metrics.trec import read_run
>>> rankings = diversity_rankings(read_diversity_qrels(d / "div.qrels"), [read_run(d / "r.run")])
>>> rankings.grade[0, 0].tolist()          # topic-level grades: the largest over subtopics
[1.0, 1.0, 0.0]
>>> rankings.intents.subtopics.tolist(), rankings.intents.grades(rankings.doc)[0, 0].tolist()
([['1', '2', '3']], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
>>> rankings.intents.probabilities(rel=1).tolist()   # uniform over subtopics with a relevant document
[[0.5, 0.5, 0.0]]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from functools import cached_property

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.rankings import Rankings, build_rankings
from rpdi.metrics.trec import DIVERSITY_QRELS, INTENTS, Qrels, _load_bytes, _read_table, encode, to_numpy

PROBABILITY_SLACK = 1e-6  # how far a topic's intent probabilities may sum from 1 (files print 4-6 decimals)


@dataclass(frozen=True)
class DiversityQrels:
    """Diversity judgments as parallel columns, one entry per (topic, subtopic, document);
    ``topic``, ``subtopic`` and ``docno`` are pyarrow dictionary arrays (any sequence of strings
    given is encoded). A grade below 0 is "in the pool, not judged", as in :class:`Qrels`."""

    topic: object
    subtopic: object
    docno: object
    grade: np.ndarray
    source: str = "<diversity qrels>"

    def __post_init__(self):
        for name in ("topic", "subtopic", "docno"):
            object.__setattr__(self, name, encode(getattr(self, name)))

    def topic_qrels(self) -> Qrels:
        """One judgment per (topic, document): its largest grade over the subtopics (a document
        relevant to some intent is relevant to the topic, as ndeval's MAP counts it). The docno
        column keeps this file's dictionary, so that a document's code in
        :class:`~metrics.rankings.Rankings` is its index in ``docno.dictionary``. Found once: the
        batches of runs ranked one after another share it, and the judgments kept for it."""
        return self._topic_qrels

    @cached_property
    def _topic_qrels(self) -> Qrels:
        import pyarrow as pa

        t, d = to_numpy(self.topic.indices).astype(np.int64), to_numpy(self.docno.indices).astype(np.int64)
        key = t * max(len(self.docno.dictionary), 1) + d
        order = np.lexsort((-self.grade, key))  # per key, the largest grade first
        first = np.r_[True, key[order][1:] != key[order][:-1]] if len(key) else np.zeros(0, bool)
        keep = order[first]
        topic = pa.DictionaryArray.from_arrays(pa.array(t[keep].astype(np.int32)), self.topic.dictionary)
        docno = pa.DictionaryArray.from_arrays(pa.array(d[keep].astype(np.int32)), self.docno.dictionary)
        return Qrels(topic, docno, self.grade[keep], source=self.source)

    def intents_table(self, topics: np.ndarray, intents: IntentProbabilities | None) -> Intents:
        """:meth:`Intents.build` of these qrels for ``topics`` with ``intents``' P(i|q), built
        once for the batches of runs ranked one after another: the last table is kept, and given
        again for the same ``intents`` object and topics."""
        kept = self._kept.get("intents")
        if kept is None or kept[0] is not intents or not np.array_equal(kept[1].topics, topics):
            kept = self._kept["intents"] = (intents, Intents.build(self, topics, intents))
        return kept[1]

    @cached_property
    def _kept(self) -> dict:
        """What :meth:`intents_table` keeps (an attribute of this object, not a field: not copied
        by dataclasses.replace)."""
        return {}


def read_diversity_qrels(path: str | os.PathLike) -> DiversityQrels:
    """Read diversity qrels, ``topic subtopic docno judgment`` lines (plain, .gz, or ``-``), as
    ndeval and ir_measures read them; a (topic, subtopic, document) judged twice is an error."""
    columns, _ = _read_table(os.fspath(path), DIVERSITY_QRELS)
    return DiversityQrels(columns["topic"], columns["subtopic"], columns["docno"], columns["grade"],
                          source=os.fspath(path))


@dataclass(frozen=True)
class IntentProbabilities:
    """P(i|q) as read from a file of ``topic subtopic probability`` lines; checked against the
    qrels by :meth:`Intents.build` (unknown topic or subtopic, sums other than 1)."""

    topic: np.ndarray  # (N,) str
    subtopic: np.ndarray  # (N,) str
    probability: np.ndarray  # (N,) float64, >= 0
    source: str = "<intents>"

    def line(self, row: int) -> str:
        """``file:line`` of the ``row``-th entry (its data line, comments and blank lines skipped);
        ``entry N`` where the text cannot be read again (a dict, standard input)."""
        if self.source.startswith("<") or self.source == "-":
            return f"{self.source}: entry {row + 1}"
        lines = _load_bytes(self.source).decode("utf-8").split("\n")
        data = [n for n, text in enumerate(lines, 1) if text.split() and not text.split()[0].startswith("#")]
        return f"{self.source}:{data[row]}"


def read_intents(path: str | os.PathLike) -> IntentProbabilities:
    """Read intent probabilities, ``topic subtopic probability`` lines; a negative probability or
    a (topic, subtopic) given twice is an error naming the line."""
    columns, _ = _read_table(os.fspath(path), INTENTS)
    names = lambda col: np.array(col.dictionary.to_pylist(), dtype=object)[to_numpy(col.indices)]
    return IntentProbabilities(names(columns["topic"]), names(columns["subtopic"]), columns["probability"],
                               source=os.fspath(path))


def intents_from_dict(probabilities: dict, source: str = "<intents>") -> IntentProbabilities:
    """Intent probabilities from ``{topic: {subtopic: probability}}``."""
    rows = [(str(t), str(s), p) for t, per in probabilities.items() for s, p in per.items()]
    try:
        p = np.array([float(r[2]) for r in rows], dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{source}: a probability is not a number") from None
    bad = np.flatnonzero(~(p >= 0) | ~np.isfinite(p))
    if bad.size:
        t, s, _ = rows[bad[0]]
        raise InputError(f"{source}: topic {t} subtopic {s}: probability {p[bad[0]]!r} is not a number >= 0")
    return IntentProbabilities(np.array([r[0] for r in rows], dtype=object),
                               np.array([r[1] for r in rows], dtype=object), p, source)


def _subtopic_order(names: list[str]) -> list[int]:
    """Subtopics in ndeval's order: by number when they are numbers (ndeval's are), else by name."""
    return sorted(range(len(names)), key=lambda i: (0, int(names[i]), "") if names[i].isdigit() else (1, 0, names[i]))


@dataclass(frozen=True, eq=False)
class Intents:
    """Every topic's intents (subtopics) and each judged document's grade for each, aligned with
    the topics of a :class:`~metrics.rankings.Rankings` (T topics, I = the most subtopics of a
    topic; padding has ``mask`` False).

    ``rows`` (T, M, I) are the grades of the topic's M judged documents (``row_doc`` their
    document codes, -1 padding; ``n_rows`` their number; ``row_rank`` their docnos' rank in
    byte order), in document code order; a document judged for some subtopics of a topic has
    grade 0 for its other subtopics.
    """

    topics: np.ndarray  # (T,) str
    subtopics: np.ndarray  # (T, I) str, "" where padded
    mask: np.ndarray  # (T, I) bool: the subtopic exists
    rows: np.ndarray  # (T, M, I) float64 grade of each judged document for each subtopic
    row_doc: np.ndarray  # (T, M) int64 document code of each row; -1 padding
    n_rows: np.ndarray  # (T,) int64
    row_rank: np.ndarray  # (T, M) int64 rank of each row's docno in byte order (ndeval's ties); -1 padding
    given: np.ndarray | None = None  # (T, I) P(i|q) from a file; None: uniform (see probabilities)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def I(self) -> int:  # noqa: E743 (the number of intents, as in the formulas)
        return self.subtopics.shape[1]

    @classmethod
    def build(cls, qrels: DiversityQrels, topics: np.ndarray, intents: IntentProbabilities | None = None) -> "Intents":
        """The table for the rankings' ``topics`` (the qrels' topics in byte order); document codes
        are indices into ``qrels.docno.dictionary`` (see :meth:`DiversityQrels.topic_qrels`)."""
        T = len(topics)
        t_names = qrels.topic.dictionary.to_pylist()
        t_pos = {name: i for i, name in enumerate(topics.tolist())}
        t_code = np.array([t_pos.get(n, -1) for n in t_names], dtype=np.int64)[to_numpy(qrels.topic.indices)]
        s_names = qrels.subtopic.dictionary.to_pylist()
        s_code = to_numpy(qrels.subtopic.indices).astype(np.int64)
        doc = to_numpy(qrels.docno.indices).astype(np.int64)
        # each topic's subtopics, in ndeval's order
        pairs = np.unique(t_code * len(s_names) + s_code)
        per_topic = [[] for _ in range(T)]
        for pair in pairs.tolist():
            per_topic[pair // len(s_names)].append(pair % len(s_names))
        I = max([len(p) for p in per_topic] + [1])
        column = np.full((T, len(s_names)), -1, dtype=np.int64)
        subtopics = np.full((T, I), "", dtype=object)
        for t, codes in enumerate(per_topic):
            ordered = [codes[i] for i in _subtopic_order([s_names[c] for c in codes])]
            column[t, ordered] = np.arange(len(ordered))
            subtopics[t, :len(ordered)] = [s_names[c] for c in ordered]
        mask = subtopics != ""
        # one row per (topic, document), in document code order
        n_docs = max(len(qrels.docno.dictionary), 1)
        key = t_code * n_docs + doc
        row_key, row_of = np.unique(key, return_inverse=True)
        row_topic = row_key // n_docs
        n_rows = np.bincount(row_topic, minlength=T).astype(np.int64)
        M = max(int(n_rows.max()) if T else 0, 1)
        slot = np.arange(len(row_key)) - np.searchsorted(row_topic, row_topic)
        rows = np.zeros((T, M, I))
        rows[row_topic[row_of], slot[row_of], column[t_code, s_code]] = qrels.grade
        row_doc = np.full((T, M), -1, dtype=np.int64)
        row_doc[row_topic, slot] = row_key % n_docs
        names = qrels.docno.dictionary.to_pylist()
        byte_rank = np.empty(len(names), dtype=np.int64)
        byte_rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))  # code point = UTF-8 order
        row_rank = np.where(row_doc >= 0, byte_rank[np.maximum(row_doc, 0)] if len(names) else -1, -1)
        given = None if intents is None else _given(intents, topics, subtopics, mask)
        return cls(topics=topics, subtopics=subtopics, mask=mask, rows=rows, row_doc=row_doc, n_rows=n_rows,
                   row_rank=row_rank, given=given)

    def grades(self, doc: np.ndarray) -> np.ndarray:
        """(S, T, D, I) every subtopic's grade of the documents ``doc`` (S, T, D) (a rankings'
        document codes; 0 for a document not judged for the topic, and past the end, -1)."""
        T, M = self.row_doc.shape
        valid = self.row_doc >= 0
        n_codes = int(self.row_doc.max(initial=-1)) + 1
        keys = (np.arange(T)[:, None] * n_codes + self.row_doc)[valid]  # ascending: topic, then code
        flat = self.rows[valid]
        key = np.arange(T)[None, :, None] * n_codes + doc
        pos = np.minimum(np.searchsorted(keys, key), max(len(keys) - 1, 0))
        hit = (doc >= 0) & (doc < n_codes) & (keys[pos] == key) if len(keys) else np.zeros(doc.shape, bool)
        return np.where(hit[..., None], flat[pos] if len(keys) else 0.0, 0.0)

    def probabilities(self, rel: float | None = None) -> np.ndarray:
        """(T, I) P(i|q): the file's, else uniform over the subtopics with a relevant document
        (grade >= ``rel``; grade > 0 if ``rel`` is None): ndeval's "actual subtopics". A topic
        with none has no intents (all 0): its intent-aware values are undefined."""
        if self.given is not None:
            return self.given
        key = ("uniform", rel)
        if key not in self._cache:
            relevant = (self.rows >= rel if rel is not None else self.rows > 0).any(axis=1) & self.mask
            count = relevant.sum(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                self._cache[key] = np.where(relevant, 1.0 / np.maximum(count, 1), 0.0)
        return self._cache[key]

    def per_intent(self, rankings: Rankings) -> Rankings:
        """The rankings with one topic per (topic, intent) pair, T * I of them in topic-major order
        (topic t's intent i at t * I + i), each holding that intent's grades; judged, pooled and
        present as the topic's (a document judged for the topic is judged for each of its intents),
        ideal and n_judged over the topic's judged documents' grades for the intent."""
        S, T, D = rankings.grade.shape
        I = self.I
        rep = lambda a: None if a is None else np.repeat(a, I, axis=1)
        g = np.maximum(np.moveaxis(self.grades(rankings.doc), -1, 2).reshape(S, T * I, D), 0.0)
        judged = rep(rankings.judged)
        grade = np.where(judged, g, 0.0)
        # the grades for each intent of the topic's judged documents, sorted descending
        rows = np.moveaxis(np.maximum(self.rows, 0.0), -1, 1).reshape(T * I, -1)
        topic_judged = np.repeat(self._judged_rows(), I, axis=0)
        ideal = -np.sort(-np.where(topic_judged, rows, -1.0), axis=-1)
        n_judged = topic_judged.sum(axis=-1).astype(np.int64)
        ideal = np.maximum(ideal, 0.0)
        names = np.array([f"{t}/{s}" for t, row in zip(self.topics.tolist(), self.subtopics.tolist()) for s in row],
                         dtype=object)
        return Rankings(runs=rankings.runs, topics=names, grade=grade, judged=judged, doc=rep(rankings.doc),
                        length=rep(rankings.length), present=rep(rankings.present), ideal=ideal, n_judged=n_judged,
                        max_grade=rankings.max_grade, words=rep(rankings.words), pooled=rep(rankings.pooled))

    def _judged_rows(self) -> np.ndarray:
        """(T, M) the rows of documents judged for the topic (some subtopic's grade >= 0)."""
        return (np.arange(self.rows.shape[1]) < self.n_rows[:, None]) & (self.rows >= 0).any(axis=-1)


def _given(intents: IntentProbabilities, topics: np.ndarray, subtopics: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(T, I) the file's probabilities, checked: known topics and subtopics, each topic's summing
    to 1 (a qrels topic with a relevant document that the file leaves out is an error too)."""
    T, I = subtopics.shape
    t_pos = {name: i for i, name in enumerate(topics.tolist())}
    s_pos = {(t, s): i for t, row in enumerate(subtopics.tolist()) for i, s in enumerate(row) if s}
    prob = np.zeros((T, I))
    first_row = {}
    for row, (topic, sub, p) in enumerate(zip(intents.topic.tolist(), intents.subtopic.tolist(),
                                              intents.probability.tolist())):
        t = t_pos.get(topic)
        if t is None:
            raise InputError(f"{intents.line(row)}: topic {topic} is not in the qrels")
        i = s_pos.get((t, sub))
        if i is None:
            raise InputError(f"{intents.line(row)}: topic {topic} has no subtopic {sub} in the qrels")
        prob[t, i] = p
        first_row.setdefault(t, row)
    for t in range(T):
        total = prob[t].sum()
        if t in first_row and abs(total - 1) > PROBABILITY_SLACK:
            raise InputError(f"{intents.line(first_row[t])}: topic {topics[t]}: the probabilities sum to "
                             f"{total:g}, not 1")
    missing = [t for t in range(T) if t not in first_row and mask[t].any()]
    if missing:
        raise InputError(f"{intents.source}: topic {topics[missing[0]]} of the qrels has no intent probabilities")
    return prob


@dataclass(frozen=True, kw_only=True)
class DiversityRankings(Rankings):
    """:class:`~metrics.rankings.Rankings` of the topic-level grades, with the subtopics'
    (``intents``): what the diversity and intent-aware measures read."""

    intents: Intents


def diversity_rankings(qrels: DiversityQrels, runs, topics: str = "qrels", float32_scores: bool = False,
                       intents: IntentProbabilities | None = None) -> DiversityRankings:
    """The runs joined with the diversity qrels: :func:`~metrics.rankings.build_rankings` on the
    topic-level qrels (:meth:`DiversityQrels.topic_qrels`), and their :class:`Intents`
    (:meth:`DiversityQrels.intents_table`: built once for the batches of runs ranked one after
    another with the same qrels and intents)."""
    rankings = build_rankings(qrels.topic_qrels(), runs, topics, float32_scores)
    table = qrels.intents_table(rankings.topics, intents)
    return DiversityRankings(**{f.name: getattr(rankings, f.name) for f in fields(rankings)}, intents=table)
