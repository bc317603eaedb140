"""Measures over the orders of tied documents: trec_eval breaks equal scores by docno, a user who
meets a tie group reads it in a random order.

A tie group is a run of documents of one (run, topic) whose scores are equal as trec_eval reads
them (:mod:`metrics.rankings`: doubles, or float32 under ``compat="pytrec_eval"``).
:func:`expected` gives each measure's expectation over the orders drawn uniformly within every
group, :func:`span` its minimum and maximum over them; both keep today's per-(run, topic)
:class:`Score` shape and say by which path each value was found:

- ``"closed_form"``: McSherry & Najork (ECIR 2008) for P, AP (GMAP), RR, DCG and nDCG
  (:mod:`metrics.tie_forms`);
- ``"linear"``: a measure linear in the documents' contributions at each rank
  (:data:`tie_forms.LINEAR`): its expectation is the measure on the group-mean gains, found as
  the mean over each group's cyclic shifts (every position meets every member once);
- ``"enumeration"``: every distinct order (documents with equal grade, judgment, pool status and
  length are interchangeable), when a ranking has at most :data:`ENUMERATION_LIMIT` of them;
- ``"sampling"``: :data:`SAMPLES` orders drawn from ``seeds.stream(seed, run, topic, "ties")``,
  with the standard error of their mean;
- ``"sorted"`` (range only): the groups sorted by grade, best and worst first, for the measures of
  :data:`tie_forms.MONOTONE`;
- ``"unchanged"``: the ranking has no tie that the measure reads: today's value, bit for bit.

A range found by sampling is the smallest and largest value seen, an inner bound.
RBO and RBO_EXT compare a run's documents with the first run's, whose ties move too: refused.

>>> from rpdi.metrics.trec import qrels_from_dict, run_from_dict
>>> from rpdi.metrics.rankings import build_rankings
>>> from rpdi.metrics.names import parse_measure
>>> r = build_rankings(qrels_from_dict({"q": {"a": 1, "b": 0}}), [run_from_dict("s", {"q": {"a": 1.0, "b": 1.0}})])
>>> e = expected(r, parse_measure("RR"))
>>> float(e.score.value[0, 0]), e.path[0, 0]
(0.75, 'closed_form')
>>> lo, hi, how = span(r, parse_measure("RR"))
>>> float(lo.value[0, 0]), float(hi.value[0, 0]), how[0, 0]
(0.5, 1.0, 'sorted')
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.seeds import stream
from rpdi.metrics.view import Score, View

ENUMERATION_LIMIT = 5040  # distinct orders of one ranking enumerated (7!); past it, sampling
SAMPLES = 2000  # orders drawn per ranking when there are more
BATCH_CELLS = 4_000_000  # (reorderings x ranks) evaluated at once
FIELDS = ("value", "residual", "num", "den")


@dataclass(frozen=True)
class Expected:
    """A measure's expectation over tie orders: ``score`` as today's measures give it (each
    field the expectation of today's), ``stderr`` (S, T) its sampling error (0 where exact),
    ``path`` (S, T) how each value was found (see the module's docstring)."""

    score: Score
    stderr: np.ndarray
    path: np.ndarray

    @property
    def paths(self) -> str:
        """The paths used, as the command prints them: ``"closed_form"``, ``"enumeration+sampling"``."""
        return paths_text(self.path)


def paths_text(path) -> str:
    """The paths an array of them took, one text: ``"enumeration+sampling"``; ``"unchanged"``
    where none read a tie."""
    return "+".join(sorted(set(np.ravel(path).tolist()) - {"unchanged"})) or "unchanged"


def tie_groups(rankings: Rankings) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of each document's tie group, (S, T, D) int64 ranks (0-based, end exclusive);
    an untied document is its own group; past the end of a ranking start = end = its rank.

    >>> from rpdi.metrics.trec import qrels_from_dict, run_from_dict
    >>> from rpdi.metrics.rankings import build_rankings
    >>> r = build_rankings(qrels_from_dict({"q": {"a": 1}}), [run_from_dict("s", {"q": {"a": 2.0, "b": 1.0, "c": 1.0, "d": 0.5}})])
    >>> [x.tolist() for x in tie_groups(r)]
    [[[[0, 1, 1, 3]]], [[[1, 3, 3, 4]]]]
    """
    S, T, D = rankings.grade.shape
    rank = np.broadcast_to(np.arange(D), (S, T, D))
    inside = rank < rankings.length[..., None]
    if rankings.tie is None:
        return rank.copy(), np.where(inside, rank + 1, rank)
    ids = rankings.tie
    new = np.ones((S, T, D), bool)
    new[..., 1:] = ids[..., 1:] != ids[..., :-1]
    start = np.maximum.accumulate(np.where(new, rank, 0), axis=-1)
    last = np.ones((S, T, D), bool)
    last[..., :-1] = new[..., 1:]
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, rank + 1, D), -1), axis=-1), -1)
    return np.where(inside, start, rank), np.where(inside, end, rank)


def expected(rankings: Rankings, measure: Measure, compat: str = "trec_eval",
             integer_rankings: Rankings | None = None, seed: int = 0) -> Expected:
    """``measure``'s expectation over the orders of each tie group, drawn uniformly at random.

    Closed form or linear path where :mod:`metrics.tie_forms` has one, else the mean over every
    distinct order (or over :data:`SAMPLES` drawn ones); rankings the measure reads without a
    tie keep today's value. ``integer_rankings`` as in :func:`metrics.evaluate.compute`.
    """
    from rpdi.metrics.tie_forms import closed_form, linear

    rankings, today, reads = _setup(rankings, measure, compat, integer_rankings)
    D = rankings.depth
    fields = {f: _field(today, f) for f in FIELDS}
    stderr = np.zeros(today.value.shape)
    path = np.where(reads, "", "unchanged").astype(object)
    form = closed_form(rankings, measure, compat) if reads.any() else None
    if form is not None:
        for f in FIELDS:
            if fields[f] is not None and getattr(form, f) is not None:
                fields[f] = np.where(reads, getattr(form, f), fields[f])
        path[reads] = "closed_form"
    elif reads.any() and linear(measure):
        for (s, t), groups, values in _batches(rankings, measure, compat, reads, lambda g, s, t: _shifts(g, D)):
            _store(fields, s, t, _shift_mean(groups, values))
            path[s, t] = "linear"
    else:
        for (s, t), values, how in _orders(rankings, measure, compat, reads, seed):
            _store(fields, s, t, {f: v.mean() for f, v in values.items()})
            stderr[s, t] = values["value"].std(ddof=1) / math.sqrt(len(values["value"])) if how == "sampling" else 0.0
            path[s, t] = how
    return Expected(Score(**fields), stderr, path)


def span(rankings: Rankings, measure: Measure, compat: str = "trec_eval",
         integer_rankings: Rankings | None = None, seed: int = 0) -> tuple[Score, Score, np.ndarray]:
    """(lowest, highest, path): ``measure``'s minimum and maximum value over the orders of the
    tie groups, as Scores of ``value`` only, and (S, T) how each was found: ``"sorted"`` for
    :data:`tie_forms.MONOTONE` measures (the two orders that sort every group by grade), else
    ``"enumeration"`` or ``"sampling"`` (the extremes seen: an inner bound)."""
    from rpdi.metrics.tie_forms import MONOTONE

    rankings, today, reads = _setup(rankings, measure, compat, integer_rankings)
    low, high = today.value.copy(), today.value.copy()
    path = np.where(reads, "", "unchanged").astype(object)
    if reads.any() and measure.spec.name in MONOTONE:
        best, worst = (measure.compute(View(_sorted(rankings, reads, b), measure.depth, compat)).value
                       for b in (True, False))
        low = np.where(reads, np.fmin(best, worst), low)
        high = np.where(reads, np.fmax(best, worst), high)
        path[reads] = "sorted"
    else:
        for (s, t), values, how in _orders(rankings, measure, compat, reads, seed):
            low[s, t], high[s, t] = values["value"].min(), values["value"].max()
            path[s, t] = how
    return Score(low), Score(high), path


def _setup(rankings, measure, compat, integer_rankings):
    """The rankings the measure reads, today's Score on them, and (S, T) where it reads a tie."""
    if measure.spec.between_runs:
        raise InputError(f"measure {measure.text!r}: compares each run's documents with the first run's, "
                         f"whose ties are reordered too; no expectation over tie orders is given for it")
    if measure.spec.intents:
        raise InputError(f"measure {measure.text!r}: reads the subtopics of diversity qrels; no expectation "
                         f"over tie orders is given for it yet")
    if measure.integer_grades and integer_rankings is not None:
        rankings = integer_rankings
    today = measure.compute(View(rankings, measure.depth, compat))
    start, end = tie_groups(rankings)
    reads = ((end - start > 1)[..., :_read_depth(rankings, measure)]).any(axis=-1)
    return rankings, today, reads


def _read_depth(rankings: Rankings, measure: Measure) -> int:
    """How many ranks the measure reads: its cutoff, or every rank for a measure that reads the
    ranking without its unjudged documents (documents past the cutoff move up)."""
    if measure.depth is None or measure.params.get("judged_only", False):
        return rankings.depth
    return min(measure.depth, rankings.depth)


def _field(score: Score, name: str):
    x = getattr(score, name)
    return None if x is None else np.array(np.broadcast_to(x, score.value.shape), dtype=np.float64)


def _store(fields: dict, s: int, t: int, values: dict) -> None:
    for f, x in fields.items():
        if x is not None:
            x[s, t] = values[f]


def _labels(rankings: Rankings) -> np.ndarray:
    """(S, T, D) int64: equal codes for documents that every measure reads alike (same grade,
    judgment, pool status and length; RBO, which reads document identities, is refused)."""
    pooled = rankings.judged if rankings.pooled is None else rankings.pooled
    words = np.zeros(rankings.grade.shape) if rankings.words is None else np.nan_to_num(rankings.words, nan=-1.0)
    rows = np.stack([rankings.grade, rankings.judged, pooled, words], axis=-1).reshape(-1, 4)
    return np.unique(rows, axis=0, return_inverse=True)[1].reshape(rankings.grade.shape)


def _groups(start: np.ndarray, end: np.ndarray, depth: int) -> list[np.ndarray]:
    """The ranks of each tie group of one ranking (its ``start``, ``end`` of :func:`tie_groups`)
    that starts within the ``depth`` read."""
    first = np.flatnonzero((start == np.arange(len(start))) & (end - start > 1) & (np.arange(len(start)) < depth))
    return [np.arange(start[i], end[i]) for i in first]


def _distinct_orders(labels: list[int]) -> list[list[int]]:
    """Every distinct order of a multiset of labels, each once."""
    counts, out, prefix = Counter(labels), [], []

    def extend():
        if len(prefix) == len(labels):
            out.append(prefix.copy())
        for label in sorted(counts):
            if counts[label]:
                counts[label] -= 1
                prefix.append(label)
                extend()
                prefix.pop()
                counts[label] += 1

    extend()
    return out


def _n_orders(labels: np.ndarray, groups: list[np.ndarray]) -> int:
    """The number of distinct orders: the product over groups of their multinomial coefficients."""
    n = 1
    for g in groups:
        n *= math.factorial(len(g)) // math.prod(math.factorial(c) for c in Counter(labels[g].tolist()).values())
    return n


def _enumerate(labels: np.ndarray, groups: list[np.ndarray], D: int) -> np.ndarray:
    """(orders, D) permutations of the ranks, one per distinct order of the groups' labels."""
    options = []
    for g in groups:
        members = {lab: g[labels[g] == lab] for lab in set(labels[g].tolist())}
        rows = []
        for seq in _distinct_orders(labels[g].tolist()):
            seen, row = Counter(), []
            for lab in seq:
                row.append(members[lab][seen[lab]])
                seen[lab] += 1
            rows.append(row)
        options.append(np.array(rows))
    total = math.prod(len(o) for o in options)
    perm = np.tile(np.arange(D), (total, 1))
    stride = 1
    for g, o in zip(groups, options):
        perm[:, g] = o[(np.arange(total) // stride) % len(o)]
        stride *= len(o)
    return perm


def _sample(groups: list[np.ndarray], D: int, rng: np.random.Generator) -> np.ndarray:
    """(SAMPLES, D) permutations: each group in a uniformly random order, the rest in place."""
    key = np.arange(D, dtype=np.float64)
    u = np.zeros((SAMPLES, D))
    for g in groups:
        key[g] = g[0]
        u[:, g] = rng.random((SAMPLES, len(g)))
    return np.argsort(key + u, axis=-1, kind="stable")


def _shifts(groups: list[np.ndarray], D: int) -> np.ndarray:
    """(1 + sum of group sizes, D) permutations: none, then each group alone in each cyclic shift."""
    rows = [np.arange(D)]
    for g in groups:
        for c in range(len(g)):
            row = np.arange(D)
            row[g] = np.roll(g, c)
            rows.append(row)
    return np.array(rows)


def _shift_mean(groups: list[np.ndarray], values: dict) -> dict:
    """A linear measure's expectation from its values on the rows of :func:`_shifts`: today's
    value plus, for each group, the mean change that its cyclic shifts make (over its shifts,
    each position meets every member of the group once, so each position's expected gain is the
    group's mean gain)."""
    sizes = [len(g) for g in groups]
    weight = np.repeat(1.0 / np.array(sizes), sizes)
    return {f: x[0] + (weight * (x[1:] - x[0])).sum() for f, x in values.items()}


def reorderings(rankings: Rankings, measure: Measure, seed: int = 0):
    """For each ranking (s, t) whose ties ``measure`` reads: ((s, t), (n, D) permutations of its
    ranks, "enumeration" or "sampling"): every distinct order of its tie groups, or the
    :data:`SAMPLES` orders drawn from ``seeds.stream(seed, run, topic, "ties")``, the orders
    :func:`expected` and :func:`span` average over (a mixture of tie orders reads the same ones).

    >>> from rpdi.metrics.trec import qrels_from_dict, run_from_dict
    >>> from rpdi.metrics.rankings import build_rankings
    >>> from rpdi.metrics.names import parse_measure
    >>> r = build_rankings(qrels_from_dict({"q": {"a": 1}}), [run_from_dict("s", {"q": {"a": 1.0, "b": 1.0}})])
    >>> [(key, perm.tolist(), how) for key, perm, how in reorderings(r, parse_measure("RR"))]
    [((0, 0), [[0, 1], [1, 0]], 'enumeration')]
    """
    rankings, _, reads = _setup(rankings, measure, "trec_eval", None)
    start, end = tie_groups(rankings)
    labels, depth = _labels(rankings), _read_depth(rankings, measure)
    for s, t in zip(*np.nonzero(reads)):
        groups = _groups(start[s, t], end[s, t], depth)
        yield (int(s), int(t)), *_permutations(rankings, labels, groups, int(s), int(t), seed)


def _permutations(rankings: Rankings, labels: np.ndarray, groups: list[np.ndarray], s: int, t: int, seed: int):
    """(permutations, how) of one ranking's tie groups: every distinct order, or a seeded sample."""
    if _n_orders(labels[s, t], groups) <= ENUMERATION_LIMIT:
        return _enumerate(labels[s, t], groups, rankings.depth), "enumeration"
    rng = np.random.default_rng(stream(seed, rankings.runs[s], str(rankings.topics[t]), "ties"))
    return _sample(groups, rankings.depth, rng), "sampling"


def _orders(rankings: Rankings, measure: Measure, compat: str, reads: np.ndarray, seed: int):
    """(s, t), the measure's fields over the ranking's orders, "enumeration" or "sampling"."""
    labels = _labels(rankings)
    chosen = {}

    def orders(groups, s, t):
        perm, chosen[s, t] = _permutations(rankings, labels, groups, s, t, seed)
        return perm

    for key, _, values in _batches(rankings, measure, compat, reads, orders):
        yield key, values, chosen[key]


def _batches(rankings: Rankings, measure: Measure, compat: str, reads: np.ndarray, permutations):
    """For each ranking (s, t) where ``reads``: its tie groups that the measure reads, and the
    measure's fields over the rows of ``permutations(groups, s, t)`` (each a reordering of the
    ranks), computed topic by topic with the reorderings of several runs stacked as the runs of
    one :class:`Rankings`, up to :data:`BATCH_CELLS` (reorderings x ranks) at a time."""
    start, end = tie_groups(rankings)
    depth = _read_depth(rankings, measure)
    for t in np.flatnonzero(reads.any(axis=0)):
        pending = []
        for s in np.flatnonzero(reads[:, t]):
            groups = _groups(start[s, t], end[s, t], depth)
            pending.append((s, groups, permutations(groups, s, t)))
            if sum(len(p) for _, _, p in pending) * depth >= BATCH_CELLS:
                yield from _evaluate(rankings, measure, compat, t, depth, pending)
                pending = []
        yield from _evaluate(rankings, measure, compat, t, depth, pending)


def _evaluate(rankings: Rankings, measure: Measure, compat: str, t: int, depth: int, pending: list):
    """The measure on topic t of each pending (run, groups, reorderings), stacked as one Rankings."""
    if not pending:
        return
    runs, groups, perms = zip(*pending)
    source = np.repeat(runs, [len(p) for p in perms])
    stacked = _reordered(rankings, source, t, np.concatenate(perms)[:, :depth])
    score = measure.compute(View(stacked, measure.depth, compat))
    cuts = np.cumsum([0] + [len(p) for p in perms])
    for i, s in enumerate(runs):
        yield (s, t), groups[i], {f: _field(score, f)[cuts[i]:cuts[i + 1], 0] for f in FIELDS
                                  if getattr(score, f) is not None}


def _reordered(rankings: Rankings, source: np.ndarray, t: int, perm: np.ndarray) -> Rankings:
    """Topic t of the rankings of runs ``source`` (N,), each reordered by its row of ``perm``
    (N, width: the ranks read, the first ``width`` of the reordering), as N runs of one topic."""
    take = lambda a: None if a is None else np.take_along_axis(a[source, t], perm, axis=-1)[:, None]
    return replace(rankings, runs=tuple(f"{rankings.runs[s]}#{i}" for i, s in enumerate(source)),
                   topics=rankings.topics[t:t + 1], grade=take(rankings.grade), judged=take(rankings.judged),
                   doc=take(rankings.doc), length=np.minimum(rankings.length[source, t], perm.shape[1])[:, None],
                   present=rankings.present[source, t][:, None], ideal=rankings.ideal[t:t + 1],
                   n_judged=rankings.n_judged[t:t + 1], words=take(rankings.words), pooled=take(rankings.pooled),
                   tie=take(rankings.tie))


def _sorted(rankings: Rankings, reads: np.ndarray, best: bool) -> Rankings:
    """The rankings with every tie group sorted best first (grade descending, unjudged before
    judged non-relevant) or worst first (the reverse), where ``reads``."""
    start, _ = tie_groups(rankings)
    sign = -1 if best else 1
    pooled = rankings.judged if rankings.pooled is None else rankings.pooled
    within = np.lexsort((-sign * pooled, -sign * rankings.judged, sign * rankings.grade, start), axis=-1)
    return reorder(rankings, np.where(reads[..., None], within, np.arange(rankings.depth)))


def reorder(rankings: Rankings, perm: np.ndarray) -> Rankings:
    """The rankings with every row's documents in the order ``perm`` (S, T, D) gives."""
    take = lambda a: None if a is None else np.take_along_axis(a, perm, axis=-1)  # noqa: E731
    return replace(rankings, grade=take(rankings.grade), judged=take(rankings.judged), doc=take(rankings.doc),
                   words=take(rankings.words), pooled=take(rankings.pooled), tie=take(rankings.tie))
