"""Qrels whose grades are uncertain: each judged document carries a distribution over grades.

Two ways to write them:

1. **One line per document**, ``topic iter docno GRADES`` (white space between fields, ``#``
   comments, gzip, ``-`` for standard input, as in :mod:`metrics.trec`), where GRADES is either a
   plain grade (probability 1, so an ordinary qrels file is read unchanged) or
   ``grade:probability`` pairs separated by commas, no blanks inside::

       GRADES := GRADE | GRADE ":" PROB ("," GRADE ":" PROB)*
       31_1 0 doc7 0:0.2,1:0.5,2:0.3
       31_1 0 doc9 2

   Grades are finite numbers (a negative grade means, in the worlds that draw it, "in the pool
   but not judged", as in trec_eval); probabilities are in [0, 1] and sum to 1 within
   :data:`TOLERANCE`, and are then divided by their sum; a grade given twice on a line, a pair
   with probability 0 aside, is an error. Pairs with probability 0 are dropped.
2. **Several ordinary qrels files, one per assessor**, combined with weights
   (:func:`combine_assessors`): a document's grade is drawn as the vote of an assessor drawn
   with probability proportional to their weight. A document judged by some assessors only is
   judged by those (``missing="renormalise"``: their weights divided by their sum), or
   counts the others' silence as grade 0 (``missing="zero"``: every assessor's weight stays).

Each document's grade is drawn independently of the others' (:mod:`metrics.uncertain_scores`
evaluates over those "judgment worlds"). Assessors disagree (Voorhees, SIGIR 1998), and LLM
judges give a probability per grade: both are written this way. Bad input raises InputError
naming file and line.

>>> u = uncertain_from_dict({"q": {"a": {0: 0.25, 2: 0.75}, "b": 1}})
>>> u.grades.tolist(), u.probs.tolist()
([[0.0, 2.0], [1.0, 1.0]], [[0.25, 0.75], [1.0, 0.0]])
"""

from __future__ import annotations

import io
import math
import os
import sys
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.trec import Layout, Qrels, _load_bytes, _read_table, encode, read_qrels, to_numpy

TOLERANCE = 1e-6  # |sum of a line's probabilities - 1| allowed
UNCERTAIN = Layout("uncertain qrels", ("topic", "iter", "docno", "grades"), ("topic", "docno", "grades"), (), 4)
MISSING = ("renormalise", "zero")


@dataclass(frozen=True)
class UncertainQrels:
    """Judgments with a grade distribution per document: entry i (``topic[i]``, ``docno[i]``,
    pyarrow dictionary arrays as in :class:`metrics.trec.Qrels`) has grade ``grades[i, k]`` with
    probability ``probs[i, k]`` (N, K); each row's probabilities sum to 1, padding has
    probability 0 and repeats the row's first grade."""

    topic: object
    docno: object
    grades: np.ndarray
    probs: np.ndarray
    source: str = "<uncertain qrels>"

    def __post_init__(self):
        object.__setattr__(self, "topic", encode(self.topic))
        object.__setattr__(self, "docno", encode(self.docno))

    @property
    def scale(self) -> float:
        """The grade scale's top: the largest positive grade with a positive probability (0 if
        none). It plays the qrels' largest grade (C/W/L's default max_rel) in every world, so
        that a world missing the top grade keeps the gains' scale."""
        positive = self.grades[(self.probs > 0) & (self.grades > 0)]
        return float(positive.max()) if positive.size else 0.0

    def ids(self) -> Qrels:
        """Ordinary qrels whose grade is the entry's index + 1: joined with runs by
        :func:`metrics.rankings.build_rankings`, they say which entry stands at each rank."""
        return Qrels(self.topic, self.docno, np.arange(1, len(self.grades) + 1, dtype=np.float64), self.source)


def load_uncertain_qrels(source) -> UncertainQrels:
    """A path (the pairs format; a plain qrels file is one too), :class:`UncertainQrels`,
    :class:`metrics.trec.Qrels` (every grade certain) or ``{topic: {docno: grade or {grade: p}}}``."""
    if isinstance(source, UncertainQrels):
        return source
    if isinstance(source, Qrels):
        return certain(source)
    if isinstance(source, Mapping):
        return uncertain_from_dict(source)
    return read_uncertain_qrels(source)


def certain(qrels: Qrels) -> UncertainQrels:
    """Ordinary qrels as uncertain ones: every grade has probability 1."""
    return UncertainQrels(qrels.topic, qrels.docno, qrels.grade[:, None].astype(np.float64),
                          np.ones((len(qrels.grade), 1)), qrels.source)


def read_uncertain_qrels(path: str | os.PathLike) -> UncertainQrels:
    """Read qrels with grade distributions (the module's format 1; plain, .gz or ``-``).
    Each distinct GRADES text is parsed once, all of them together (:func:`_parse_all`); only
    if one is malformed are they parsed one by one (:func:`parse_grades`), to say which and why.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "u.txt"
    >>> _ = p.write_text("1 0 d1 0:0.5,3:0.5\\n1 0 d2 2\\n")
    >>> read_uncertain_qrels(p).grades.tolist()
    [[0.0, 3.0], [2.0, 2.0]]
    """
    path = os.fspath(path)
    data = stdin_bytes() if path == "-" else None  # kept to name a bad line
    columns, _ = _read_table(path, UNCERTAIN)
    strings = columns["grades"].dictionary
    table = _parse_all(strings)
    if table is None:
        texts = strings.to_pylist()
        parsed = []
        for text in texts:
            try:
                parsed.append(parse_grades(text))
            except ValueError as exc:
                raise InputError(f"{path}:{_line_of(path, text, data)}: grades {text!r}: {exc}") from None
        table = _from_lists(parsed)
    index = to_numpy(columns["grades"].indices)
    return UncertainQrels(columns["topic"], columns["docno"], table[0][index], table[1][index], path)


def parse_grades(text: str) -> tuple[list[float], list[float]]:
    """A GRADES field as (grades, probabilities as written); ValueError saying what is wrong.

    >>> parse_grades("0:0.2,1:0.5,2:0.3")
    ([0.0, 1.0, 2.0], [0.2, 0.5, 0.3])
    >>> parse_grades("1:0.5,2:0.4")
    Traceback (most recent call last):
    ValueError: probabilities sum to 0.9, not 1
    """
    if ":" not in text:
        return [_number(text, "grade")], [1.0]
    grades, probs = [], []
    for item in text.split(","):
        grade, colon, prob = item.partition(":")
        if not colon:
            raise ValueError(f"{item!r} is not a grade:probability pair")
        g, p = _number(grade, "grade"), _number(prob, "probability")
        if not 0 <= p <= 1:
            raise ValueError(f"probability {prob!r} is not in [0, 1]")
        if g in grades:
            raise ValueError(f"grade {grade!r} is given twice")
        grades.append(g)
        probs.append(p)
    total = math.fsum(probs)
    if abs(total - 1) > TOLERANCE:
        raise ValueError(f"probabilities sum to {total:.6g}, not 1")
    return grades, probs


def _parse_all(strings) -> tuple[np.ndarray, np.ndarray] | None:
    """Every GRADES text of a pyarrow string array at once, with pyarrow's string kernels, as
    :func:`_pack` packs them; None if some text is not well formed in :func:`parse_grades`'s sense."""
    import pyarrow as pa
    import pyarrow.compute as pc

    items = pc.split_pattern(strings, ",")
    per_text = to_numpy(pc.list_value_length(items))
    row = to_numpy(pc.list_parent_indices(items)).astype(np.int64)
    parts = pc.split_pattern(pc.list_flatten(items), ":")
    n_parts = to_numpy(pc.list_value_length(parts))
    try:
        numbers = to_numpy(pc.cast(pc.list_flatten(parts), pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    lone = n_parts == 1
    if not (((n_parts == 2) | (lone & (per_text[row] == 1))).all() and np.isfinite(numbers).all()):
        return None
    first = to_numpy(parts.offsets)[:-1].astype(np.int64) - parts.offset
    grade = numbers[first]
    prob = np.where(lone, 1.0, numbers[np.minimum(first + 1, len(numbers) - 1)])
    total = np.bincount(row, weights=prob, minlength=len(strings))
    order = np.lexsort((grade, row))
    twice = (row[order][1:] == row[order][:-1]) & (grade[order][1:] == grade[order][:-1])
    if ((prob < 0) | (prob > 1)).any() or (np.abs(total - 1) > TOLERANCE).any() or twice.any():
        return None
    return _pack(row, grade, prob, len(strings))


def combine_assessors(assessors: Sequence, weights: Sequence[float] | None = None,
                      missing: str = "renormalise") -> UncertainQrels:
    """One uncertain qrels from several assessors' ordinary qrels (paths or :class:`Qrels`),
    weighted (default: equally): a document's grade g has probability sum of the weights of the
    assessors who gave g over the sum of the weights of those who judged it (``missing=
    "renormalise"``) or of all assessors (``missing="zero"``: one who did not judge it gives 0).

    >>> from rpdi.metrics.trec import qrels_from_dict
    >>> u = combine_assessors([qrels_from_dict({"q": {"a": 1, "b": 2}}), qrels_from_dict({"q": {"a": 0}})], [3, 1])
    >>> u.docno.dictionary.to_pylist(), u.grades.tolist(), u.probs.tolist()
    (['a', 'b'], [[0.0, 1.0], [2.0, 2.0]], [[0.25, 0.75], [1.0, 0.0]])
    """
    import pyarrow as pa

    qrels = [q if isinstance(q, Qrels) else read_qrels(q) for q in assessors]
    if not qrels:
        raise InputError("no assessor's qrels given")
    weights = np.ones(len(qrels)) if weights is None else np.asarray(weights, dtype=np.float64)
    if weights.shape != (len(qrels),):
        raise InputError(f"assessor weights: expected {len(qrels)}, one per qrels file, not {weights.size}")
    if not (np.isfinite(weights).all() and (weights > 0).all()):
        raise InputError(f"assessor weights: expected positive numbers, not {weights.tolist()}")
    if missing not in MISSING:
        raise InputError(f"missing: expected one of {', '.join(MISSING)}, not {missing!r}")
    codes = []
    for column in ("topic", "docno"):
        merged = pa.chunked_array([getattr(q, column) for q in qrels]).unify_dictionaries()
        codes.append((merged.chunk(0).dictionary, np.concatenate([to_numpy(c.indices) for c in merged.chunks])))
    (topics, t), (docnos, d) = codes
    grade = np.concatenate([q.grade for q in qrels])
    weight = np.repeat(weights, [len(q.grade) for q in qrels])
    pairs, entry = np.unique(t.astype(np.int64) * len(docnos) + d, return_inverse=True)
    # the silent assessors' weight, as votes for grade 0 (missing="zero"); each row's sum
    # of weights, the judging assessors' or all assessors', is what _pack divides by
    some = np.bincount(entry, minlength=len(pairs)) < len(qrels)
    silent = np.where(some & (missing == "zero"), weights.sum() - np.bincount(entry, weights=weight), 0.0)
    entry = np.concatenate([entry, np.flatnonzero(silent > 0)])
    grade = np.concatenate([grade, np.zeros(int((silent > 0).sum()))])
    weight = np.concatenate([weight, silent[silent > 0]])
    values, g = np.unique(grade, return_inverse=True)
    cells, cell = np.unique(entry * len(values) + g, return_inverse=True)
    grades, probs = _pack(cells // len(values), values[cells % len(values)], np.bincount(cell, weights=weight),
                          len(pairs))
    topic = pa.DictionaryArray.from_arrays(pa.array((pairs // len(docnos)).astype(np.int32)), topics)
    docno = pa.DictionaryArray.from_arrays(pa.array((pairs % len(docnos)).astype(np.int32)), docnos)
    return UncertainQrels(topic, docno, grades, probs, " + ".join(q.source for q in qrels))


def uncertain_from_dict(judgments: Mapping[str, Mapping[str, object]], source: str = "<uncertain qrels>") -> UncertainQrels:
    """From ``{topic: {docno: grade or {grade: probability}}}`` (checked as a file's lines are)."""
    topics, docnos, parsed = [], [], []
    for t, docs in judgments.items():
        for d, value in docs.items():
            try:
                text = (",".join(f"{float(g)!r}:{float(p)!r}" for g, p in value.items()) if isinstance(value, Mapping)
                        else repr(float(value)))
                parsed.append(parse_grades(text))
            except (TypeError, ValueError) as exc:
                hint = (" (a grade distribution {grade: probability}; diversity qrels {topic: {subtopic: "
                        "{docno: grade}}} are read so only with a diversity or intent-aware measure)"
                        if isinstance(value, Mapping) else "")
                raise InputError(f"{source}: topic {t} document {d}: {exc}{hint}") from None
            topics.append(str(t))
            docnos.append(str(d))
    if not parsed:
        raise InputError(f"{source}: empty")
    grades, probs = _from_lists(parsed)
    return UncertainQrels(np.array(topics, dtype=object), np.array(docnos, dtype=object), grades, probs, source)


def _number(text: str, what: str) -> float:
    try:
        if "_" in text:  # float() accepts 1_000, pyarrow's parser (and trec_eval) do not
            raise ValueError(text)
        value = float(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{what} {text!r} is not finite")
    return value


def _from_lists(parsed: list[tuple[list[float], list[float]]]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_pack` of :func:`parse_grades`' results, one per text."""
    row = np.repeat(np.arange(len(parsed)), [len(g) for g, _ in parsed])
    grade = np.array([g for gs, _ in parsed for g in gs], dtype=np.float64)
    prob = np.array([p for _, ps in parsed for p in ps], dtype=np.float64)
    return _pack(row, grade, prob, len(parsed))


def _pack(row: np.ndarray, grade: np.ndarray, prob: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(grades, probs) as (n, K) arrays from items sorted by row: pairs of probability 0 dropped,
    each row's probabilities divided by their sum, padding as in UncertainQrels.

    >>> _pack(np.array([0, 0, 1]), np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 1.0]), 2)
    (array([[2.],
           [3.]]), array([[1.],
           [1.]]))
    """
    prob = prob / np.bincount(row, weights=prob, minlength=n)[row]
    keep = prob > 0
    row, grade, prob = row[keep], grade[keep], prob[keep]
    start = np.searchsorted(row, np.arange(n))
    slot = np.arange(len(row)) - start[row]
    grades = np.repeat(grade[start][:, None], int(slot.max()) + 1, axis=1)
    probs = np.zeros(grades.shape)
    grades[row, slot] = grade
    probs[row, slot] = prob
    return grades, probs


def stdin_bytes() -> bytes:
    """Standard input's bytes (gzip undone), read and put back: ``sys.stdin`` then gives them
    again, from memory, to the next reader. So standard input can be looked into before it is
    read (:func:`metrics.uncertain_eval.has_pairs`) and its bad line named after."""
    data = _load_bytes("-")
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    return data


def _line_of(path: str, text: str, data: bytes | None = None) -> int | str:
    """The first line whose GRADES field is ``text`` in the file at ``path`` (or its bytes
    ``data``), only on the way to an error."""
    data = _load_bytes(path) if data is None else data
    for lineno, raw in enumerate(data.decode("utf-8").split("\n"), 1):
        parts = raw.split()
        if len(parts) == 4 and not parts[0].startswith("#") and parts[3] == text:
            return lineno
    return "?"
