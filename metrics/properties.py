"""The seven numeric properties of Moffat (2013), decided by search, with counterexamples.

A metric is given as a *scorer*: a function from a batch of test rankings to scores. A test
ranking is a grade vector of length n (all judged) together with ``extra``, the number of
relevant documents of the top grade that the collection holds but the ranking does not
retrieve, so R = (relevant in the vector) + extra. The metric is evaluated at depth n (its
cutoff set to n; a measure without a cutoff reads the n documents, nothing relevant beyond).
Vectors are searched exhaustively (all binary vectors of the depth k under study) and at random
(graded vectors), with several values of ``extra``; a property holds when no counterexample is
found. Scores are compared with a relative tolerance ``tol`` (1e-13: ERR's strict gains at depth
10 can be below 1e-9). Of the violations found, the clearest is reported: the fewest non-zero
grades, then the relevant documents earliest (the paper's "11111" vs "111110"). Definitions (the
paper's Section 4, for depth k):

  bounded      the scores stay bounded as k grows (all-relevant rankings at depths k, 10k, 50k:
               unbounded when the deepest passes 1.5 times the depth-k score, or 1, and the
               growth does not die out, as it does for a convergent series such as TBG's);
  monotonic    extending a ranking of length k to k+1 never lowers the score (R unchanged);
  convergent   swapping a document from outside the top k for a less relevant one inside
               strictly raises the score;
  top_weighted swapping a document within the top k for a less relevant one higher up
               strictly raises the score (at k = 1 there is no such swap: it holds);
  localized    the score at depth k does not depend on the collection beyond the top k;
  complete     a score exists when no document is relevant (nor when the top k has none);
  realizable   for every R >= 1 some ranking of depth k attains the metric's maximum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from rpdi.metrics.rankings import Rankings

PROPERTIES = ("bounded", "monotonic", "convergent", "top_weighted", "localized", "complete", "realizable")
Scorer = Callable[[Rankings, int], np.ndarray]  # (rankings of depth n, n) -> scores (T,)


def test_rankings(vectors: np.ndarray, extra: np.ndarray, top: float) -> Rankings:
    """A batch of judged rankings (one per row of ``vectors``) as :class:`Rankings`, each topic
    holding ``extra`` more relevant documents of grade ``top`` that are not retrieved."""
    vectors = np.asarray(vectors, dtype=float)
    T, n = vectors.shape
    extra = np.broadcast_to(np.asarray(extra, dtype=np.int64), (T,))
    M = n + int(extra.max(initial=0))
    pool = np.zeros((T, max(M, 1)))
    pool[:, :n] = vectors
    pool[:, n:M] = np.where(np.arange(M - n) < extra[:, None], top, 0.0)
    ideal = -np.sort(-pool, axis=1)
    n_judged = np.full(T, n) + extra
    return Rankings.of_grades(vectors[None], ideal, n_judged, top, runs=("test",))


@dataclass
class Analysis:
    verdicts: dict[str, bool]
    counterexamples: dict[str, dict]
    search: str = ""  # how the binary rankings were searched: exhaustively, or sampled

    def record(self, measure: str) -> dict:
        return {"measure": measure, **self.verdicts, "counterexamples": self.counterexamples,
                "search": self.search}


def _text(vector) -> str:
    return "".join(f"{int(g)}" if float(g).is_integer() else f"{g:g}," for g in vector)


def _case(vector, extra, score) -> dict:
    relevant = int((np.asarray(vector) > 0).sum()) + int(extra)
    return {"ranking": _text(vector), "R": relevant, "score": None if np.isnan(score) else float(score)}


class _Probe:
    """Scores batches of (vector, extra) test rankings with the scorer, grouped by depth."""

    def __init__(self, scorer: Scorer, top: float):
        self.scorer = scorer
        self.top = top

    def __call__(self, vectors, extra) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=float)
        if len(vectors) == 0:
            return np.zeros(0)
        return np.asarray(self.scorer(test_rankings(vectors, extra, self.top), vectors.shape[1]), dtype=float)


EXHAUSTIVE_DEPTH = 16  # all 2^k binary rankings are searched up to this depth; beyond, a sample
SAMPLED = 1 << 16  # random binary rankings searched beyond EXHAUSTIVE_DEPTH (plus the k + 1 prefixes)
CHUNK = 4096  # rankings scored at once: memory stays bounded whatever the depth


def binary_chunks(k: int, top: float, seed: int = 0):
    """(a function giving the chunks of binary test rankings anew, a sentence saying how they
    are searched). Up to depth EXHAUSTIVE_DEPTH: all 2^k, in counting order; deeper:
    the k + 1 rankings with the first j documents relevant, then SAMPLED random ones."""
    if k <= EXHAUSTIVE_DEPTH:
        def chunks():
            for start in range(0, 2 ** k, CHUNK):
                codes = np.arange(start, min(start + CHUNK, 2 ** k))
                yield top * ((codes[:, None] >> np.arange(k - 1, -1, -1)) & 1)
        return chunks, f"exhaustive: all {2 ** k} binary rankings of depth {k}"

    def chunks():
        yield top * (np.arange(k)[None, :] < np.arange(k + 1)[:, None])
        for i in range(SAMPLED // CHUNK):
            yield top * np.random.default_rng([seed, 1, i]).integers(0, 2, (CHUNK, k))
    return chunks, (f"sampled: 2^{k} binary rankings are too many to enumerate (the limit is depth "
                    f"{EXHAUSTIVE_DEPTH}); searched the {k + 1} with relevant documents first and "
                    f"{SAMPLED} random ones")


def analyse(scorer: Scorer, k: int = 10, grades: tuple = (0, 1, 2), samples: int = 3000,
            seed: int = 0, tol: float = 1e-13) -> Analysis:
    """Decide the seven properties of a metric at depth k; see the module docstring. The
    rankings are scored in chunks of CHUNK (bounded memory); binary rankings deeper than
    EXHAUSTIVE_DEPTH are sampled, as ``search`` of the result says."""
    top = float(max(grades))
    probe = _Probe(scorer, top)
    rng = np.random.default_rng(seed)
    binary, search = binary_chunks(k, top, seed)
    graded = rng.choice(np.asarray(grades, dtype=float), size=(samples, k))

    def chunks():
        yield from binary()
        yield graded

    verdicts, examples = {}, {}

    def decide(name, found):
        verdicts[name] = found is None
        if found is not None:
            examples[name] = found

    bounded, sup = _bounded(probe, k, top, tol)
    decide("bounded", bounded)
    decide("monotonic", _monotonic(probe, chunks, top, tol))
    decide("convergent", _swap_in(probe, chunks, top, tol))
    decide("top_weighted", _clearest_over(chunks(), lambda v: _swap_up(probe, v, rng, tol)))
    decide("localized", _clearest_over(chunks(), lambda v: _localized(probe, v, tol)))
    decide("complete", _complete(probe, k))
    decide("realizable", _realizable(probe, binary, k, top, sup, bounded))
    return Analysis(verdicts, examples, search)


def _clearest_over(chunks, check):
    """The clearest counterexample over all chunks: ``check(chunk)`` gives a chunk's clearest
    (case, the vector the order is taken on) or None."""
    found = [f for f in map(check, chunks) if f is not None]
    if not found:
        return None
    return found[_clearest(np.array([key for _, key in found]))][0]


def _slack(scores, tol):
    """The tolerance for comparing scores: relative to their size (at least ``tol``)."""
    return tol * np.maximum(1.0, np.abs(np.nan_to_num(scores)))


def _clearest(vectors, fewest: bool = True) -> int:
    """The index of the clearest of these rankings: fewest (or most) non-zero grades, then the
    larger grades earliest (lexicographically largest)."""
    vectors = np.asarray(vectors)
    keys = tuple(-vectors[:, c] for c in range(vectors.shape[1] - 1, -1, -1))
    nonzero = (vectors != 0).sum(axis=1)
    return int(np.lexsort(keys + (nonzero if fewest else -nonzero,))[0])


def grades_for(measure) -> tuple:
    """Grades to search: a binary measure (with ``rel``) sees 0 and rel; a graded one 0, half its
    max_rel and max_rel (default 0, 1, 2)."""
    rel = measure.params.get("rel")
    if rel is not None:
        return (0.0, float(rel))
    top = measure.params.get("max_rel") or 2.0
    return (0.0, top / 2, float(top))


def closed_form_scorer(measure) -> Scorer:
    """A scorer from a measure's closed form, its cutoff set to each test ranking's depth."""
    from rpdi.metrics.evaluate import compute
    from rpdi.metrics.names import parse_measure

    m = parse_measure(measure) if isinstance(measure, str) else measure
    return lambda rankings, n: compute(rankings, [m.at_depth(n)])[0].value[0]


def _bounded(probe, k, top, tol):
    depths = [k, 10 * k, 50 * k]
    best = []
    for d in depths:
        v = np.full((2, d), top)
        best.append(float(np.nanmax(probe(v, np.array([0, d])))))
    sup = max(best)
    settles = best[2] - best[1] < 0.5 * (best[1] - best[0])  # a convergent series (TBG, RBP)
    if best[-1] > max(1.0, 1.5 * best[0]) + tol and not settles:
        return ({"ranking": f"{top:g} x {depths[0]}", "score": best[0],
                 "versus": {"ranking": f"{top:g} x {depths[-1]}", "score": best[-1]},
                 "why": "all-relevant rankings score without bound as they deepen"}, sup)
    return None, sup


def _monotonic(probe, chunks, top, tol):
    for add, spare in ((0.0, 0), (top, 1)):
        found = _clearest_over(chunks(), lambda v: _extended(probe, v, add, spare, tol))
        if found is not None:
            return found
    return None


def _extended(probe, vectors, add, spare, tol):
    extra = np.full(len(vectors), 1 + spare)  # the appended relevant one comes from the extras
    before = probe(vectors, extra)
    after = probe(np.concatenate([vectors, np.full((len(vectors), 1), add)], axis=1), extra - spare)
    bad = np.flatnonzero(after < before - _slack(before, tol))
    if not bad.size:
        return None
    j = bad[_clearest(vectors[bad])]
    return {**_case(np.append(vectors[j], add), extra[j] - spare, after[j]),
            "versus": _case(vectors[j], extra[j], before[j]),
            "why": "extending the ranking by one document lowered the score"}, vectors[j]


def _swap_in(probe, chunks, top, tol):
    for extra0 in (1, 3):
        found = _clearest_over(chunks(), lambda v: _swapped_in(probe, v, extra0, top, tol))
        if found is not None:
            return found
    return None


def _swapped_in(probe, vectors, extra0, top, tol):
    rows, cols = np.nonzero(vectors == 0)
    before_all = probe(vectors, extra0)
    swapped = vectors[rows].copy()
    swapped[np.arange(len(rows)), cols] = top
    after = probe(swapped, extra0 - 1)
    bad = np.flatnonzero(after <= before_all[rows] + _slack(before_all[rows], tol))
    if not bad.size:
        return None
    j = bad[_clearest(swapped[bad])]
    return {**_case(swapped[j], extra0 - 1, after[j]),
            "versus": _case(vectors[rows[j]], extra0, before_all[rows[j]]),
            "why": "a relevant document from outside the top k replaced a non-relevant one "
                   "and the score did not rise"}, swapped[j]


def _swap_up(probe, vectors, rng, tol):
    k = vectors.shape[1]
    if k < 2:  # a single document: no swap within the top k, the property holds vacuously
        return None
    i, j = np.triu_indices(k, 1)
    pick = rng.integers(0, len(i), len(vectors))
    i, j = i[pick], j[pick]
    rows = np.arange(len(vectors))
    better_below = vectors[rows, i] < vectors[rows, j]
    rows, i, j = rows[better_below], i[better_below], j[better_below]
    before = probe(vectors[rows], 2)
    swapped = vectors[rows].copy()
    swapped[np.arange(len(rows)), i], swapped[np.arange(len(rows)), j] = vectors[rows, j], vectors[rows, i]
    after = probe(swapped, 2)
    bad = np.flatnonzero(after <= before + _slack(before, tol))
    if not bad.size:
        return None
    b = bad[_clearest(swapped[bad])]
    return {**_case(swapped[b], 2, after[b]), "versus": _case(vectors[rows[b]], 2, before[b]),
            "why": "moving a more relevant document up within the top k did not raise the score"}, swapped[b]


def _localized(probe, vectors, tol):
    a, b = probe(vectors, 1), probe(vectors, 7)
    differ = ~np.isclose(a, b, rtol=tol, atol=tol) & ~(np.isnan(a) & np.isnan(b))
    bad = np.flatnonzero(differ)
    if not bad.size:
        return None
    j = bad[_clearest(vectors[bad])]
    return {**_case(vectors[j], 1, a[j]), "versus": _case(vectors[j], 7, b[j]),
            "why": "the same top k scored differently when the collection beyond it changed"}, vectors[j]


def _complete(probe, k):
    empty = np.zeros((2, k))
    scores = probe(empty, np.array([0, 3]))
    for j, why in ((0, "no score when nothing is relevant (R = 0)"),
                   (1, "no score when the top k holds nothing relevant, though R > 0")):
        if np.isnan(scores[j]):
            return {**_case(empty[j], [0, 3][j], scores[j]), "why": why}
    return None


def _realizable(probe, binary, k, top, sup, unbounded):
    if unbounded is not None:
        return {"why": "unbounded: there is no maximum to attain"}
    for R in sorted({1, max(1, k // 2), k, 2 * k}):
        best, kept = -np.inf, []  # the best score so far; per chunk, its best rankings' clearest
        for chunk in binary():
            counts = (chunk > 0).sum(axis=1)
            vec = chunk[counts <= R]
            if not len(vec):
                continue
            scores = probe(vec, R - (vec > 0).sum(axis=1))
            if np.all(np.isnan(scores)):
                continue
            top_score = np.nanmax(scores)
            if top_score < best - 1e-12:
                continue
            at_best = np.flatnonzero(scores >= top_score - 1e-12)  # of the best rankings, the one
            j = at_best[_clearest(vec[at_best], fewest=False)]  # using most of R, relevant earliest
            kept = [c for c in kept if c[2] >= top_score - 1e-12] + [(vec[j], R - int((vec[j] > 0).sum()), scores[j])]
            best = max(best, top_score)
        if not kept:
            continue
        kept = [c for c in kept if c[2] >= best - 1e-12]
        vector, extra, score = kept[_clearest(np.array([c[0] for c in kept]), fewest=False)]
        if score < sup - 1e-6:
            return {**_case(vector, extra, score), "maximum": sup,
                    "why": f"with R = {R} no ranking of depth {k} reaches the maximum {sup:.4g}"}
    return None
