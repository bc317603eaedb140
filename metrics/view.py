"""What a closed form sees: the rankings cut at a depth k, and per-topic facts from the qrels."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rpdi.metrics.rankings import Rankings


@dataclass(frozen=True)
class Score:
    """A measure's per-(run, topic) values; NaN marks an undefined value (e.g. R = 0).

    ``residual`` is the width of the interval left by unjudged documents and the unknown tail
    (RBP); ``num``/``den`` are the per-topic parts of a ratio, for micro-averaging.
    """

    value: np.ndarray
    residual: np.ndarray | None = None
    num: np.ndarray | None = None
    den: np.ndarray | None = None


class View:
    """Rankings seen to depth ``k`` (``None``: the whole ranking), padded with zeros to width k.

    ``grade``, ``judged``, ``pooled`` and ``retrieved`` have shape (S, T, k); ``ideal`` and
    ``n_judged`` are per topic and broadcast against (S, T). ``compat`` is the semantics asked
    for where trec_eval versions differ: ``"trec_eval"`` (10.0) or ``"pytrec_eval"`` (9.x).
    """

    def __init__(self, rankings: Rankings, k: int | None = None, compat: str = "trec_eval"):
        self.rankings = rankings
        self.compat = compat
        D = rankings.depth
        self.k = D if k is None else int(k)
        self.cutoff = None if k is None else int(k)  # None: read to the ranking's end
        self.length = np.minimum(rankings.length, self.k)  # documents seen: min(n, k)
        width = min(D, self.k)
        pooled = rankings.judged if rankings.pooled is None else rankings.pooled
        self.grade = _cut(rankings.grade, width, self.k)
        self.judged = _cut(rankings.judged, width, self.k)
        self.pooled = _cut(pooled, width, self.k)
        self.words = None if rankings.words is None else _cut(rankings.words, width, self.k, np.nan)
        self.ideal = rankings.ideal
        self.n_judged = rankings.n_judged
        self.max_grade = rankings.max_grade
        self._cache: dict[tuple, np.ndarray] = {}  # see _once

    @cached_property
    def ranks(self) -> np.ndarray:
        """1..k as float64, shape (k,)."""
        return np.arange(1, self.k + 1, dtype=np.float64)

    @cached_property
    def retrieved(self) -> np.ndarray:
        """(S, T, k) bool: a document stands at this rank."""
        return np.arange(self.k) < self.length[..., None]

    def relevant(self, rel: float) -> np.ndarray:
        """(S, T, k) 0/1 float: judged grade >= rel."""
        return self._once(("relevant", rel), lambda: (self.grade >= rel).astype(np.float64))

    def found(self, rel: float) -> np.ndarray:
        """(S, T, k) float: relevant documents (grade >= rel) in ranks 1..i."""
        return self._once(("found", rel), lambda: np.cumsum(self.relevant(rel), axis=-1))

    def precisions(self, rel: float) -> np.ndarray:
        """(S, T, k) Prec@i for every rank i (relevance: grade >= rel)."""
        return self._once(("precisions", rel), lambda: self.found(rel) / self.ranks)

    def _once(self, key: tuple, make) -> np.ndarray:
        """``make()``, computed once per view and key (many measures share a relevance level), read-only."""
        if key not in self._cache:
            self._cache[key] = make()
            self._cache[key].flags.writeable = False
        return self._cache[key]

    def R(self, rel: float) -> np.ndarray:
        """(T,) number of documents judged with grade >= rel."""
        return (self.ideal >= rel).sum(axis=1).astype(np.float64)

    def scaled(self, max_rel: float | None, min_rel: float = 0.0) -> np.ndarray:
        """(S, T, k) gains in [0, 1] (:func:`scaled_gains`; max_rel defaults to the qrels' largest grade)."""
        return scaled_gains(self.grade, self.max_grade if max_rel is None else max_rel, min_rel)


def scaled_gains(grade: np.ndarray, max_rel: float, min_rel: float = 0.0) -> np.ndarray:
    """(g - min_rel) / (max_rel - min_rel) with g the grade clipped to [min_rel, max_rel]: C/W/L's
    gains (cwl_eval, ir_measures' min_rel and max_rel); 0 everywhere if max_rel <= min_rel.

    >>> scaled_gains(np.array([0.0, 1.0, 2.0, 3.0]), 2.0, 1.0).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """
    if max_rel <= min_rel:
        return np.zeros_like(grade)
    return (np.clip(grade, min_rel, max_rel) - min_rel) / (max_rel - min_rel)


def _cut(a: np.ndarray, width: int, k: int, fill=0) -> np.ndarray:
    """The first ``width`` ranks of (S, T, D) ``a``, padded with ``fill`` to ``k``: a read-only
    view of ``a`` where no padding is needed (no copy of the rankings; a closed form that wrote
    into it would raise), else a padded copy."""
    if width == k:
        view = a[:, :, :width]
        view.flags.writeable = False
        return view
    return np.pad(a[:, :, :width], ((0, 0), (0, 0), (0, k - width)), constant_values=fill)
