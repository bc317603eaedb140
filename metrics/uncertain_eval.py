"""Evaluating runs on qrels with uncertain grades: what ``rpdi eval`` and ``rpdi.evaluate`` do
when the judgments are distributions (:mod:`metrics.uncertain`, :mod:`metrics.uncertain_scores`).

Qrels are read as uncertain when they are given so (:class:`UncertainQrels`, a dict with some
``{grade: probability}``), when a qrels file has a ``grade:probability`` pair in its grade
column (:func:`has_pairs`, found by looking, so a plain qrels file is read exactly as before), or
when several assessors' files are combined (:func:`judgments`). Judgments whose every grade has
probability 1 are ordinary qrels (:func:`judgments` returns :class:`Qrels`): every command then
gives today's output, to the byte.

>>> from rpdi.metrics.uncertain import uncertain_from_dict
>>> q = {"q": {"a": {0: 0.5, 1: 0.5}, "b": 1}}
>>> r, = evaluate(q, {"r": {"q": {"a": 2.0, "b": 1.0}}}, ["P@2"])
>>> r["value"], r["sd"], r["path"]
(0.75, 0.25, 'enumeration')
>>> most_probable(uncertain_from_dict({"q": {"a": {0: 0.5, 1: 0.5}, "b": {2: 0.9, 1: 0.1}}})).grade.tolist()
[0.0, 2.0]
"""

from __future__ import annotations

import os
import re
from typing import Mapping, Sequence

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.frames import IRDS_PREFIX, read_table_file
from rpdi.metrics.trec import Qrels
from rpdi.metrics.uncertain import UncertainQrels, combine_assessors, load_uncertain_qrels, stdin_bytes

# a line whose fourth field (GRADES) holds a colon: grade:probability pairs
_PAIRS = re.compile(rb"^[ \t]*[^\s#]\S*[ \t]+\S+[ \t]+\S+[ \t]+[^\s:]*:", re.M)
FIELDS = ("run", "topic", "measure", "value", "sd", "low", "high", "error", "path")


def has_pairs(path) -> bool:
    """Whether the qrels file at ``path`` (plain or .gz; ``-``: standard input, read and put
    back for the reader, :func:`metrics.uncertain.stdin_bytes`) has a ``grade:probability`` pair;
    a parquet or TSV/CSV file with a header row (:func:`metrics.frames.read_table_file`) has one
    grade a row."""
    path = os.fspath(path)
    if path == "-":
        return _holds_pair(stdin_bytes())
    if path.startswith(IRDS_PREFIX) or not os.path.isfile(path) or read_table_file(path, header_only=True):
        return False  # the ordinary reader says what is wrong with a missing file
    return _file_has_pairs(path)


def _file_has_pairs(path: str) -> bool:
    """Whether the file at ``path`` (plain or .gz) has a line with a pair, read a block at a time:
    a line across two blocks is searched whole (its start, kept, and its end), the block's own
    lines in place; False if it cannot be read (the ordinary reader says why)."""
    import gzip
    import zlib

    try:
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            fh = gzip.GzipFile(fileobj=raw) if gzipped else raw
            unfinished = b""
            while block := fh.read(PAIRS_BLOCK):
                cut = block.find(b"\n")
                if cut < 0:  # no line ends in this block
                    unfinished += block
                    continue
                # (from just after a line end, ^ matches where the search starts)
                if _holds_pair(unfinished + block[:cut + 1]) or _holds_pair(block, cut + 1):
                    return True
                unfinished = block[block.rfind(b"\n") + 1:]
            return _holds_pair(unfinished)
    except (OSError, EOFError, zlib.error):
        return False


PAIRS_BLOCK = 1 << 24  # bytes of a qrels file searched for a pair at a time


def _holds_pair(data: bytes, start: int = 0) -> bool:
    """Whether ``data`` from ``start`` (the start of a line) has a line with a pair."""
    # (memchr first: most qrels have no colon)
    return data.find(b":", start) >= 0 and _PAIRS.search(data, start) is not None


def is_uncertain(qrels, measures=()) -> bool:
    """Whether ``qrels`` (anything the short API takes) has grade distributions.

    A dict of dicts of dicts is either grade distributions ``{topic: {docno: {grade:
    probability}}}`` or diversity qrels ``{topic: {subtopic: {docno: grade}}}``: it is diversity
    qrels when a diversity or intent-aware measure is among ``measures`` (:func:`reads_intents`)
    or when no innermost dict has only grades (numbers) for keys, else grade distributions (with
    numeric docnos, only the measures tell diversity qrels apart).

    >>> diverse = {"q": {"s1": {"d1": 1}, "s2": {"d2": 1}}}
    >>> is_uncertain(diverse), is_uncertain({"q": {"1": {"0": 0.5, "2": 0.5}}})
    (False, True)
    >>> is_uncertain({"q": {"7": {"5": 1.0}}}), is_uncertain({"q": {"7": {"5": 1.0}}}, ["alpha-nDCG@10"])
    (True, False)
    """
    if isinstance(qrels, UncertainQrels):
        return True
    if isinstance(qrels, Mapping):
        return not reads_intents(measures) and any(
            isinstance(v, Mapping) and v and all(_is_grade(g) for g in v)
            for docs in qrels.values() if isinstance(docs, Mapping) for v in docs.values())
    return isinstance(qrels, (str, os.PathLike)) and has_pairs(qrels)


def reads_intents(measures) -> bool:
    """Whether one of ``measures`` (names or Measures; trec_eval's names, which parse no
    further, have no diversity measure) reads diversity qrels' subtopics."""
    from rpdi.metrics.measures.registry import Measure
    from rpdi.metrics.names import parse_measure

    for m in measures:
        try:
            m = m if isinstance(m, Measure) else parse_measure(m)
        except InputError:
            continue
        if m.spec.intents:
            return True
    return False


def _is_grade(key) -> bool:
    try:
        float(key)
    except (TypeError, ValueError):
        return False
    return True


def assessor(text: str) -> tuple[str, float]:
    """``FILE[:WEIGHT]`` as (path, weight); a name whose part after the last colon is no
    number, or that exists as a file, is a path of weight 1.

    >>> assessor("b.qrels:2"), assessor("b.qrels")
    (('b.qrels', 2.0), ('b.qrels', 1.0))
    """
    path, colon, weight = text.rpartition(":")
    if not colon or not path or os.path.exists(text):
        return text, 1.0
    try:
        return path, float(weight)
    except ValueError:
        return text, 1.0


def judgments(qrels, assessors: Sequence[str] = (), missing: str = "renormalise") -> Qrels | UncertainQrels:
    """The judgments: ``qrels`` (a path or anything :func:`load_uncertain_qrels` takes), combined
    with further assessors' qrels files ``FILE[:WEIGHT]`` (``qrels`` itself weighs 1) by
    :func:`metrics.uncertain.combine_assessors`; ordinary :class:`Qrels` when every grade is certain."""
    if assessors:
        paths, weights = zip(*[(qrels, 1.0)] + [assessor(a) for a in assessors])
        for path in paths:
            if isinstance(path, (str, os.PathLike)) and has_pairs(path):
                raise InputError(f"{path}: has grade:probability pairs; an assessor's qrels give one grade "
                                 f"per document")
        u = combine_assessors(paths, weights, missing)
    else:
        u = load_uncertain_qrels(qrels)
    if (u.probs[:, 0] == 1).all():
        return Qrels(u.topic, u.docno, u.grades[:, 0].copy(), u.source)
    return u


def most_probable(u: UncertainQrels) -> Qrels:
    """Each document's most probable grade (of equally probable ones, the lowest): one judgment
    world, in which every measure is defined as on any qrels."""
    top = u.probs >= u.probs.max(axis=1, keepdims=True)
    grade = np.where(top, u.grades, np.inf).min(axis=1)
    return Qrels(u.topic, u.docno, grade, u.source + " (most probable grades)")


def evaluate(qrels, runs, measures, *, per_topic: bool = False, worlds: int = 1000, seed: int = 0,
             level: float = 0.95, exact_worlds: int | None = None, topics: str = "qrels",
             compat: str = "trec_eval", max_docs: int | None = None, judged_only: bool = False) -> list[dict]:
    """Each run's expected score over the judgment worlds of ``qrels`` (uncertain, or a path
    read so), records with :data:`FIELDS`: ``value`` the expectation, ``sd`` its standard
    deviation over worlds, ``low``/``high`` the central ``level`` interval, ``path`` how it was
    found (enumeration, linear or exact moments: exact; sampled: ``worlds`` drawn worlds, with
    the Monte Carlo standard error ``error``), per (run, measure) and, with ``per_topic``, per
    topic before it. Undefined values count 0 in each world."""
    from rpdi.metrics.uncertain_scores import EXACT_WORLDS, join, records, spreads

    j = join(qrels, runs, topics, compat, max_docs, judged_only)
    every = spreads(j, measures, samples=worlds, seed=seed, level=level,
                    exact_worlds=EXACT_WORLDS if exact_worlds is None else exact_worlds)
    out = []
    for s in every:
        out += records(s, per_topic)
    return out


def check_settings(worlds: int, seed: int) -> None:
    """InputError naming ``worlds`` or ``seed`` if out of range."""
    if isinstance(worlds, bool) or not isinstance(worlds, int) or worlds < 2:
        raise InputError(f"worlds: expected a whole number of at least 2 judgment worlds, not {worlds!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed: expected a whole number >= 0, not {seed!r}")
