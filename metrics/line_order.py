"""The order of a run's lines in trec_eval's rankings: by topic, score descending, and equal
scores by docno descending in byte order (the rank column and the lines' order play no part).

Lines are grouped by topic with one sort of packed integers (:func:`stable_order`), each topic's
scores sorted as a row of a NaN-padded matrix (a row fits in the cache), and the documents of a
tie group ordered by their docnos' first 8 bytes, by all their bytes only where two share them.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.docnos import byte_order, first_word


def order_run(t: np.ndarray, d: np.ndarray, score: np.ndarray, float32_scores: bool, T: int, strings):
    """The topic codes of the run's evaluated lines in ranking order, their document codes (in
    file order; entries of ``strings``), the order that sorts them in trec_eval's order (by topic
    then score descending, :func:`stable_order`, :func:`_score_order`; equal scores by docno
    descending, :func:`_break_ties`), and where sorted neighbours tie (same topic, same score)."""
    keep = t >= 0
    if not keep.all():
        t, d, score = t[keep], d[keep], score[keep]
    if float32_scores:
        with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as trec_eval stores it
            score = score.astype(np.float32).astype(np.float64)
    same_topic = t[1:] == t[:-1]
    if bool((t[1:] >= t[:-1]).all() and ((score[1:] <= score[:-1]) | ~same_topic).all()):
        order = np.arange(len(t))  # already in ranking order, as most run files are
    else:
        order = _score_order(stable_order(t), t, score, T)
    t, score = t[order], score[order]
    tie = (t[1:] == t[:-1]) & (score[1:] == score[:-1])
    _break_ties(order, tie, d, strings)
    return t, d, order, tie


def stable_order(codes: np.ndarray) -> np.ndarray:
    """The order that sorts the non-negative ``codes`` (below 2^31) stably, each code's positions
    in their order: one sort of the code and the position packed in an integer (a stable argsort
    of the codes costs three times more).

    >>> stable_order(np.array([2, 0, 2, 1, 0])).tolist()
    [1, 4, 3, 0, 2]
    """
    shift = np.uint64(max(len(codes) - 1, 1).bit_length())  # codes < 2^31 and positions < 2^32: 63 bits
    packed = (codes.astype(np.uint64) << shift) | np.arange(len(codes), dtype=np.uint64)
    packed.sort()
    packed &= (np.uint64(1) << shift) - np.uint64(1)
    return packed.view(np.int64)


def _score_order(grouped: np.ndarray, t: np.ndarray, score: np.ndarray, T: int) -> np.ndarray:
    """``grouped`` (the lines by topic, :func:`stable_order`) with each topic's lines sorted by
    score descending: the (topics x most lines of a topic) matrix of negated scores, padded with
    NaN (which sorts last), sorted along its rows. A row fits in the cache, where one sort of
    every line would not: three times faster."""
    count = np.bincount(t, minlength=T)
    start = np.cumsum(count) - count
    width = int(count.max())
    filled = np.arange(width) < count[:, None]
    grid = np.full((T, width), np.nan)
    negated = score[grouped]
    grid[filled] = np.negative(negated, out=negated)  # row-major: each topic's lines in turn
    del negated
    column = np.argsort(grid, axis=1)
    del grid
    column += start[:, None]
    line = column[filled]
    del column
    return grouped[line]


TIE_BLOCK = 1 << 16  # lines whose ties are broken at a time: their temporaries (a dozen arrays of
# 8 bytes a tied line) stay a few MB; 44 MB at the peak of rpdi eval at 10 x 6,980 x 100 in one piece


def _break_ties(order: np.ndarray, tie: np.ndarray, d: np.ndarray, strings) -> None:
    """Order a run's documents of equal score by docno descending in byte order, in place:
    ``d`` indexes ``strings``, the docnos (a pyarrow string array). About :data:`TIE_BLOCK`
    lines at a time (:func:`_stretches`), each group of equal scores whole in one stretch."""
    for lo, hi in _stretches(tie, TIE_BLOCK):
        _break_stretch(order[lo:hi], tie[lo:hi - 1], d, strings)


def _stretches(tie: np.ndarray, size: int):
    """The bounds (lo, hi) of consecutive stretches of the ``len(tie) + 1`` lines, each at least
    ``size`` lines but the last, cut only between two lines that do not tie.

    >>> list(_stretches(np.array([True, False, True, True, False, False]), 2))
    [(0, 2), (2, 5), (5, 7)]
    """
    n = len(tie) + 1
    lo = 0
    while lo < n:
        hi = min(lo + size, n)
        while hi < n and tie[hi - 1]:  # lines hi - 1 and hi tie: the cut moves past their group
            free = np.flatnonzero(~tie[hi - 1:hi - 1 + size])
            hi = min(hi + (int(free[0]) if free.size else size), n)
        yield lo, hi
        lo = hi


def _break_stretch(order: np.ndarray, tie: np.ndarray, d: np.ndarray, strings) -> None:
    """:func:`_break_ties` on one stretch of lines: each group of equal scores is sorted by its
    docnos' first 8 bytes; the docnos of a group that share them, among themselves by all their
    bytes (:func:`metrics.docnos.byte_order`)."""
    if not tie.any():
        return
    idx, group = _runs(tie)
    sub = order[idx]
    codes = d[sub]
    first = first_word(strings, codes)
    by = np.argsort(~first)  # first bytes descending
    by = by[stable_order(group[by])]
    g, f = group[by], first[by]
    shared = (g[1:] == g[:-1]) & (f[1:] == f[:-1])  # neighbours of a group with the same first 8 bytes
    if shared.any():  # each run of them again, by all their bytes
        at, run = _runs(shared)
        members = by[at]
        rank = np.empty(len(at), dtype=np.int64)
        rank[byte_order(strings, codes[members])] = np.arange(len(at))
        by[at] = members[np.lexsort((-rank, run))]
    order[idx] = sub[by]


def _runs(tie: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lines that belong to a run of neighbours that ``tie`` (``tie[i]``: lines i and i + 1),
    and the number of each one's run, counted from 1.

    >>> [a.tolist() for a in _runs(np.array([True, False, False, True, True]))]
    [[0, 1, 3, 4, 5], [1, 1, 2, 2, 2]]
    """
    idx = np.flatnonzero(_members(tie))
    return idx, np.cumsum(np.concatenate(([True], ~tie))[idx])  # a line not tied to the one before starts a run


def _members(tie: np.ndarray) -> np.ndarray:
    member = np.zeros(len(tie) + 1, dtype=bool)
    member[1:] |= tie
    member[:-1] |= tie
    return member
