"""Scores over judgment worlds: what a measure is worth when each grade is a distribution.

A *world* gives every judged document one grade, drawn from its distribution
(:mod:`metrics.uncertain`) independently of the others'. A measure's score in a world is its
ordinary score on those qrels (undefined values counted as 0, as trec_eval reports them), with
one exception: the gains' scale (the qrels' largest grade, C/W/L's default max_rel) is the
grade scale's top (:attr:`UncertainQrels.scale`) in every world. :func:`spread` gives, per
(run, topic) and for the runs' mean over topics, the score's expectation over worlds, its
standard deviation and an interval (the central ``level`` quantiles); :func:`compare` the
distribution of the difference of two runs' means over the same worlds and P(B beats A).

Each topic's worlds are found one of three ways (``Spread.path``):

- ``enumeration``: every world of the topic, with its probability, when there are at most
  ``exact_worlds`` (the product of the topic's documents' numbers of grades). Exact.
- ``linear``: the measure is a sum over the ranked documents of a term that depends on the
  document's own grade and its rank only (:data:`LINEAR`: P, SetP, DCG, CG, SDCG, RBP,
  BetaRBP, NPV, SET, U, trec_dcg, the counts of retrieved documents, Unj, Judged, RBO; the
  normaliser reads no grade). Then E[score] = score(base) + sum_d E[term_d] and Var[score] =
  sum_d Var[term_d] (documents independent), each term_d(g) read off the measure itself as the
  change of its score when d alone takes grade g (one world per document and grade). Exact;
  the interval comes from ``samples`` worlds. For a linear measure with identity gains this is
  the score of the expected grades; for an adaptive user's measure (ERR, AP, INST, RBP2) it is
  not (Jensen): those are sampled.
- ``sampled``: ``samples`` worlds drawn from a numpy Generator seeded by
  ``metrics.seeds.stream(seed, "judgments", topic)``: the same worlds for every run, measure
  and batch; its Monte Carlo standard error is reported in ``error``.

Topics are independent (their documents are drawn independently), so the mean over topics has
expectation mean_t E_t and covariance (between runs a and b) sum_t Cov_t[a, b] / (n_a n_b);
exact when every topic's moments are. Its distribution (interval, P(B beats A)) is enumerated
when the product of the topics' world counts is at most ``exact_worlds``, else drawn: draw w of
every topic, taken together, is one world of the whole qrels. A geometric mean (GMAP) is
always taken from those joint worlds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import _aggregate, compute, expand, load_runs
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.rankings import Rankings, build_rankings, judged_only as judged_only_rankings, truncate
from rpdi.metrics.seeds import stream
from rpdi.metrics.trec import to_numpy
from rpdi.metrics.uncertain import UncertainQrels, load_uncertain_qrels

EXACT_WORLDS = 4096  # at most this many worlds are enumerated (a topic's, or the whole qrels')
SAMPLES = 1000  # worlds drawn per topic otherwise
LEVEL = 0.95  # the interval's coverage
TIE = 1e-12  # |mean_B - mean_A| at most this is a tie, not a win
CELLS = 1 << 22  # the most (run x world x rank) cells evaluated at once
LINEAR = frozenset({"P", "SetP", "DCG", "CG", "SDCG", "RBP", "BetaRBP", "NPV", "SET", "U", "trec_dcg",
                    "NumQ", "NumRet", "NumRelRet", "NumNonRelJudgedRet", "Unj", "Judged", "RBO", "RBO_EXT"})


@dataclass(frozen=True)
class Judgments:
    """Runs joined with uncertain qrels: at each rank, which judged document (entry) stands there."""

    ids: Rankings  # grade: entry index + 1 at each rank, 0 where the document is not in the qrels
    qrels: UncertainQrels
    local: np.ndarray  # (S, T, D) the entry's index among its topic's entries; -1: not in the qrels
    entries: tuple[np.ndarray, ...]  # per topic, its entries' indices
    compat: str
    judged_only: bool
    scale: float  # the qrels' grade scale (UncertainQrels.scale)
    fractional: bool  # some grade has a fraction: trec_eval's names read its integer part
    negative: bool  # some grade (of positive probability) is negative: "judged" depends on the world
    max_docs: int | None  # with judged_only, each world's rankings are cut after it (trec_eval -J, then -M)


def join(qrels, runs, topics: str = "qrels", compat: str = "trec_eval",
         max_docs: int | None = None, judged_only: bool = False) -> Judgments:
    """Runs (paths, :class:`Run` objects or dicts) joined with uncertain qrels (anything
    :func:`metrics.uncertain.load_uncertain_qrels` takes) in trec_eval's order, cut to
    ``max_docs`` (trec_eval -M); ``judged_only`` (-J) is applied in each world (before -M)."""
    qrels = load_uncertain_qrels(qrels)
    ids = build_rankings(qrels.ids(), load_runs(runs), topics, float32_scores=compat == "pytrec_eval")
    if max_docs is not None and not judged_only:
        ids = truncate(ids, max_docs)
    topic_values = np.array(qrels.topic.dictionary.to_pylist(), dtype=object)
    entry_topic = np.searchsorted(ids.topics, topic_values)[to_numpy(qrels.topic.indices)]
    order = np.argsort(entry_topic, kind="stable")
    starts = np.searchsorted(entry_topic[order], np.arange(len(ids.topics) + 1))
    local_of = np.empty(len(order), dtype=np.int64)
    local_of[order] = np.arange(len(order)) - starts[entry_topic[order]]
    entry = ids.grade.astype(np.int64) - 1
    local = np.where(entry >= 0, local_of[np.maximum(entry, 0)], -1)
    entries = tuple(order[starts[t]:starts[t + 1]] for t in range(len(ids.topics)))
    possible = qrels.grades[qrels.probs > 0]
    return Judgments(ids, qrels, local, entries, compat, judged_only, qrels.scale,
                     bool((np.trunc(possible) != possible).any()), bool((possible < 0).any()), max_docs)


def world_rankings(j: Judgments, t: int, G: np.ndarray, scale: float, depth: int | None = None) -> Rankings:
    """Topic t's rankings in worlds whose grades are ``G`` (W, entries of t): runs x W "topics"
    (one per world) x ranks (the first ``depth``), as :func:`metrics.rankings.build_rankings`
    builds them from those qrels, except that the largest grade is ``scale``."""
    S, W = len(j.ids.runs), len(G)
    local = j.local[:, t, :depth]
    hit = local >= 0
    g = np.where(hit[:, None, :], G[:, np.maximum(local, 0)].transpose(1, 0, 2), 0.0)  # (S, W, ranks)
    ideal = np.zeros((W, max(max(len(e) for e in j.entries), 1)))
    ideal[:, :G.shape[1]] = -np.sort(-np.where(G >= 0, G, 0.0), axis=1)
    wide = lambda a: None if a is None else np.broadcast_to(a[:, t:t + 1, :depth], g.shape)
    r = Rankings(runs=j.ids.runs, topics=np.repeat(j.ids.topics[t:t + 1], W), grade=np.where(g > 0, g, 0.0),
                 judged=hit[:, None, :] & (g >= 0), doc=wide(j.ids.doc),
                 length=np.broadcast_to(np.minimum(j.ids.length[:, t:t + 1], g.shape[2]), (S, W)),
                 present=np.ones((S, W), bool), ideal=ideal, n_judged=(G >= 0).sum(axis=1), max_grade=scale,
                 words=wide(j.ids.words), pooled=np.broadcast_to(hit[:, None, :], g.shape))
    if not j.judged_only:
        return r
    r = judged_only_rankings(r)
    return r if j.max_docs is None else truncate(r, j.max_docs)


def world_scores(j: Judgments, m: Measure, t: int, G: np.ndarray) -> np.ndarray:
    """(S, W) the measure's score of each run on topic t in each world ``G`` (W, entries of t),
    undefined values as 0; the rankings cut to the measure's depth unless judged_only moves
    documents up; worlds evaluated in batches of at most CELLS cells."""
    depth = None if j.judged_only or m.params.get("judged_only") else m.depth
    S, _, D = j.local[:, :, :depth].shape
    step = max(1, CELLS // max(S * D, 1))
    out = []
    for lo in range(0, len(G), step):
        g = G[lo:lo + step]
        integer = world_rankings(j, t, np.trunc(g), float(np.trunc(j.scale)), depth) if j.fractional else None
        out.append(np.nan_to_num(compute(world_rankings(j, t, g, j.scale, depth), [m], j.compat, integer)[0].value))
    return np.concatenate(out, axis=1)


@dataclass(frozen=True)
class TopicWorlds:
    """One measure's scores on one topic over its worlds: ``mean`` (S,), ``cov`` (S, S),
    ``draws`` (S, W) scores in drawn worlds, and where enumerated, every world's scores
    ``atoms`` (S, n) and probabilities ``weights`` (n,)."""

    path: str
    mean: np.ndarray
    cov: np.ndarray
    draws: np.ndarray
    atoms: np.ndarray | None = None
    weights: np.ndarray | None = None


def topic_worlds(j: Judgments, m: Measure, t: int, samples: int = SAMPLES, seed: int = 0,
                 exact_worlds: int = EXACT_WORLDS) -> TopicWorlds:
    """The measure on topic t over its worlds, by enumeration, linearity or sampling (see the module)."""
    e = j.entries[t]
    grades, probs = j.qrels.grades[e], j.qrels.probs[e]
    sizes = (probs > 0).sum(axis=1)
    u = np.flatnonzero(sizes > 1)  # the topic's uncertain entries
    base = grades[:, 0]
    rng = np.random.default_rng(stream(seed, "judgments", str(j.ids.topics[t])))
    cum = np.cumsum(probs, axis=1)[:, :-1]
    drawn = np.minimum((rng.random((samples, len(e)))[:, :, None] >= cum).sum(axis=-1), sizes - 1)  # (W, n)
    if np.prod(sizes[u].astype(float)) <= exact_worlds:
        strides = np.cumprod(np.concatenate(([1], sizes[u][:-1]))).astype(np.int64)
        n = int(np.prod(sizes[u])) if len(u) else 1
        choice = np.arange(n)[:, None] // strides % sizes[u]  # (n, uncertain)
        G = np.repeat(base[None], n, axis=0)
        G[:, u] = grades[u, choice]
        weights = np.prod(probs[u, choice], axis=1)
        atoms = world_scores(j, m, t, G)
        mean = atoms @ weights
        centred = atoms - mean[:, None]
        draws = atoms[:, rng.choice(n, size=samples, p=weights / weights.sum())]
        return TopicWorlds("enumeration", mean, (centred * weights) @ centred.T, draws, atoms, weights)
    if is_linear(m, j):
        ranked = u[np.isin(u, j.local[:, t])]  # the others change no score of a linear measure
        rows, ks = np.nonzero((probs[ranked] > 0) & (np.arange(probs.shape[1]) > 0))  # column 0: the base
        G = np.repeat(base[None], 1 + len(rows), axis=0)
        G[1 + np.arange(len(rows)), ranked[rows]] = grades[ranked[rows], ks]
        scores = world_scores(j, m, t, G)
        term = np.zeros((len(scores), len(ranked), grades.shape[1]))  # each document's term, grade k
        term[:, rows, ks] = scores[:, 1:] - scores[:, :1]
        p = probs[ranked]
        expected = (term * p).sum(axis=-1)  # (S, ranked)
        centred = term - expected[..., None]
        cov = np.einsum("ajk,bjk,jk->ab", centred, centred, p)
        draws = scores[:, :1] + np.take_along_axis(term, drawn[None, :, ranked].transpose(0, 2, 1), axis=-1).sum(axis=1)
        return TopicWorlds("linear", scores[:, 0] + expected.sum(axis=1), cov, draws)
    draws = world_scores(j, m, t, np.take_along_axis(grades, drawn.T, axis=1).T)
    return TopicWorlds("sampled", draws.mean(axis=1), np.atleast_2d(np.cov(draws, ddof=1)), draws)


def is_linear(m: Measure, j: Judgments) -> bool:
    """Whether the ``linear`` path is exact for the measure: declared in :data:`LINEAR`, read in
    rank order (no judged_only that some negative grade would reorder), not relative to R."""
    reorders = (m.params.get("judged_only") or j.judged_only) and j.negative
    return m.spec.name in LINEAR and not reorders and not m.params.get("relative")


@dataclass(frozen=True)
class Summary:
    """A distribution's expectation, standard deviation, interval (``low``, ``high``) and the
    Monte Carlo standard error of the expectation (0 where exact), each (S,) or (S, T)."""

    mean: np.ndarray
    sd: np.ndarray
    low: np.ndarray
    high: np.ndarray
    error: np.ndarray


@dataclass(frozen=True)
class Spread:
    """One measure's scores over judgment worlds: per (run, topic) ``topic`` (a Summary of (S, T)
    arrays) found by ``path`` (T,) and per run ``overall`` (the mean over topics, or the sum or
    geometric mean the measure takes), found by ``overall_path``: "enumeration" (every world),
    "exact moments" (mean and sd exact, the interval from drawn worlds) or "sampled"."""

    measure: Measure
    runs: tuple[str, ...]
    topics: np.ndarray
    path: np.ndarray
    topic: Summary
    overall: Summary
    overall_path: str
    worlds: tuple[TopicWorlds, ...]
    present: np.ndarray  # (S, T) the topics in each run's mean
    joint: tuple[np.ndarray, np.ndarray]  # the overall score in joint worlds (S, n) and their weights (n,)


def spread(j: Judgments, measure, samples: int = SAMPLES, seed: int = 0, exact_worlds: int = EXACT_WORLDS,
           level: float = LEVEL) -> Spread:
    """The measure (a name or :class:`Measure`) over the judgment worlds of ``j`` (see the module).

    >>> from rpdi.metrics.uncertain import uncertain_from_dict
    >>> j = join(uncertain_from_dict({"q": {"a": {0: 0.5, 1: 0.5}, "b": 1}}), {"r": {"q": {"a": 2.0, "b": 1.0}}})
    >>> s = spread(j, "P@2")
    >>> s.path.tolist(), s.overall.mean.tolist(), s.overall.sd.tolist(), s.overall_path
    (['enumeration'], [0.75], [0.25], 'enumeration')
    """
    if samples < 2:
        raise InputError(f"samples: expected at least 2 worlds, not {samples}")
    if not 0 < level < 1:
        raise InputError(f"level: expected a probability in (0, 1), not {level}")
    found = [measure] if isinstance(measure, Measure) else expand([measure])
    if len(found) != 1:
        raise InputError(f"measure {measure!r}: names {len(found)} measures; spread takes one (spreads takes several)")
    m = found[0]
    if m.spec.compute is None:
        raise InputError(f"measure {m.text!r}: has no closed form to evaluate in each world")
    if m.spec.intents:
        raise InputError(f"measure {m.text!r}: reads the subtopics of diversity qrels, which have no uncertain "
                         f"grades yet")
    worlds = tuple(topic_worlds(j, m, t, samples, seed, exact_worlds) for t in range(len(j.ids.topics)))
    path = np.array([w.path for w in worlds])
    var = np.stack([np.diag(w.cov) for w in worlds], axis=1)
    draws = np.stack([w.draws for w in worlds], axis=1)  # (S, T, W)
    sampled = path == "sampled"
    low, high = _interval_of_topics(worlds, level)
    topic = Summary(np.stack([w.mean for w in worlds], axis=1), np.sqrt(np.maximum(var, 0.0)), low, high,
                    np.where(sampled, np.sqrt(var / samples), 0.0))
    present, how = j.ids.present, m.spec.average
    joint = _joint_worlds(worlds, present, how, exact_worlds)
    if joint is not None:
        values, weights = joint
        mean, cov, overall_path = values @ weights, _weighted_cov(values, weights), "enumeration"
    else:
        values = _aggregate(draws.transpose(0, 2, 1), present[:, None, :], how)
        weights = np.full(samples, 1.0 / samples)
        if how != "geometric" and not sampled.any():
            mean, cov, overall_path = _aggregate(topic.mean, present, how), _cov_of_mean(worlds, present, how), "exact moments"
        else:
            mean, cov, overall_path = values.mean(axis=1), np.atleast_2d(np.cov(values, ddof=1)), "sampled"
    sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
    error = sd / np.sqrt(samples) if overall_path == "sampled" else np.zeros_like(sd)
    overall = Summary(mean, sd, *_quantiles(values, weights, level), error)
    return Spread(m, j.ids.runs, j.ids.topics, path, topic, overall, overall_path, worlds, present, (values, weights))


def spreads(j: Judgments, measures, **options) -> list[Spread]:
    """:func:`spread` of each measure named (rpdi's, ir_measures' or trec_eval's names, families
    expanded as ``rpdi eval`` expands them); ``options`` as spread's."""
    return [spread(j, m, **options) for m in expand(measures)]


def records(s: Spread, per_topic: bool = False) -> list[dict]:
    """Flat records as :func:`metrics.evaluate.evaluate` gives them, one per (run, measure) with
    topic "all" (and, with ``per_topic``, one per topic in the run's mean before it): ``value``
    the expectation over worlds, ``sd``, ``low``, ``high``, ``error`` (Monte Carlo) and ``path``."""
    out = []
    for r, run in enumerate(s.runs):
        rows = [(str(s.topics[t]), s.topic, (r, t), str(s.path[t])) for t in np.flatnonzero(s.present[r])] if per_topic else []
        for topic, summary, at, path in rows + [("all", s.overall, r, s.overall_path)]:
            out.append({"run": run, "topic": topic, "measure": s.measure.text, "value": float(summary.mean[at]),
                        "sd": float(summary.sd[at]), "low": float(summary.low[at]), "high": float(summary.high[at]),
                        "error": float(summary.error[at]), "path": path})
    return out


@dataclass(frozen=True)
class Comparison:
    """Run B against run A over the same judgment worlds: the difference of their overall scores
    (B - A) as a Summary of scalars, P(B beats A) (difference > TIE), P(tie) and the Monte Carlo
    standard error of P(B beats A) (0 where exact; 0 too when no drawn world, or every one, is a
    win: P is then below, or above 1 minus, 3 / worlds at 95%); ``path`` as Spread.overall_path.
    Only the judgments' uncertainty is counted: the topics are the ones given, not a sample."""

    difference: Summary
    p_beats: float
    p_tie: float
    p_error: float
    path: str


def compare(s: Spread, a: int | str, b: int | str, level: float = LEVEL) -> Comparison:
    """Runs ``b`` against ``a`` (indices or names) over the judgment worlds of a Spread.

    >>> from rpdi.metrics.uncertain import uncertain_from_dict
    >>> j = join(uncertain_from_dict({"q": {"a": {0: 0.5, 1: 0.5}, "b": {0: 0.25, 1: 0.75}}}),
    ...          {"A": {"q": {"a": 1.0}}, "B": {"q": {"b": 1.0}}})
    >>> c = compare(spread(j, "P@1"), "A", "B")
    >>> float(c.difference.mean), float(c.p_beats), float(c.p_tie)
    (0.25, 0.375, 0.5)
    """
    a, b = (s.runs.index(x) if isinstance(x, str) else x for x in (a, b))
    values, weights = s.joint
    diff = values[b] - values[a]
    beats, tie = (float(np.average(x, weights=weights)) for x in (diff > TIE, np.abs(diff) <= TIE))
    if s.overall_path == "enumeration":
        mean, sd, path = float(diff @ weights), float(np.sqrt(max(_weighted_cov(diff[None], weights)[0, 0], 0.0))), "enumeration"
    elif s.overall_path == "exact moments":
        cov = _cov_of_mean(s.worlds, s.present, s.measure.spec.average)
        mean = float(s.overall.mean[b] - s.overall.mean[a])
        sd, path = float(np.sqrt(max(cov[a, a] + cov[b, b] - 2 * cov[a, b], 0.0))), "exact moments"
    else:
        mean, sd, path = float(diff.mean()), float(diff.std(ddof=1)), "sampled"
    low, high = (float(x[0]) for x in _quantiles(diff[None], weights, level))
    n = len(weights)
    error = sd / np.sqrt(n) if path == "sampled" else 0.0
    p_error = 0.0 if path == "enumeration" else float(np.sqrt(beats * (1 - beats) / n))
    return Comparison(Summary(mean, sd, low, high, error), beats, tie, p_error, path)


def _weighted_cov(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    centred = values - (values @ weights)[:, None]
    return (centred * weights) @ centred.T


def _quantiles(values: np.ndarray, weights: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Each row's (1 - level)/2 and (1 + level)/2 quantiles under the weights (the smallest value
    whose cumulative weight reaches them)."""
    order = np.argsort(values, axis=-1, kind="stable")
    cum = np.cumsum(weights[order], axis=-1)
    sorted_values = np.take_along_axis(values, order, axis=-1)
    at = lambda q: np.take_along_axis(sorted_values, np.minimum((cum < q * cum[..., -1:] - 1e-12).sum(axis=-1,
                                      keepdims=True), values.shape[-1] - 1), axis=-1)[..., 0]
    return at((1 - level) / 2), at((1 + level) / 2)


def _interval_of_topics(worlds: tuple[TopicWorlds, ...], level: float) -> tuple[np.ndarray, np.ndarray]:
    """(S, T) interval bounds per topic: from the atoms where enumerated, else the draws."""
    bounds = [_quantiles(w.atoms, w.weights, level) if w.atoms is not None else
              _quantiles(w.draws, np.full(w.draws.shape[1], 1.0 / w.draws.shape[1]), level) for w in worlds]
    return np.stack([b[0] for b in bounds], axis=1), np.stack([b[1] for b in bounds], axis=1)


def _joint_worlds(worlds, present: np.ndarray, how: str, limit: int):
    """Every world of the whole qrels (the topics' enumerated worlds combined) as the overall
    score (S, n) and probabilities (n,), if every topic is enumerated and n <= limit; else None."""
    if any(w.atoms is None for w in worlds) or np.prod([float(len(w.weights)) for w in worlds]) > limit:
        return None
    atoms = np.zeros((present.shape[0], 1, 0))
    weights = np.ones(1)
    for w in worlds:
        n, k = atoms.shape[1], len(w.weights)
        atoms = np.concatenate([np.repeat(atoms, k, axis=1), np.tile(w.atoms, (1, n))[:, :, None]], axis=2)
        weights = np.repeat(weights, k) * np.tile(w.weights, n)
    return _aggregate(atoms, present[:, None, :], how), weights


def _cov_of_mean(worlds, present: np.ndarray, how: str) -> np.ndarray:
    """(S, S) covariance of the runs' overall scores from the topics' (independent) covariances:
    sum_t [t in a's and b's topics] Cov_t[a, b] / (n_a n_b) for a mean, without the division for a sum."""
    p = present.astype(float)
    if how == "mean":
        p = p / np.maximum(present.sum(axis=1, keepdims=True), 1)
    return np.einsum("at,bt,tab->ab", p, p, np.stack([w.cov for w in worlds]))
