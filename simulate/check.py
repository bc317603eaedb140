"""The three-way agreement check and its verdict: closed form, exact expectation, simulated users.

Every comparison of an experiment (or of one ``simulate`` call) enters ONE verdict:

* closed form vs exact, per ranking: equal to a relative 1e-9, or equal to what the model
  *declares* instead (:data:`DECLARED`: TBG's random reading times, RBP's horizon);
  deterministic, so an exact check outside the error budget;
* simulated vs exact where the model's outcome does not vary: equal (exact check);
* each ranking's users drawn from a stream of its own (exact check, :func:`streams_cell`);
* simulated vs exact, per ranking and per mean over a run's topics (each engine), and the
  sample's mean square deviation from the exact value vs the model's per-user variance (per run):
  stochastic, one family at family-wise error rate ``alpha``.

The stochastic family is decided in two stages (see :func:`verdict` and the README, "How the
verdict decides"): a screen by normal z-tests with Holm's procedure, then, for the screened-out
cells only, a confirmation on an independent random stream with Bennett's inequality, which
holds whatever the outcome's skew, and Holm again. Only a confirmed cell is a disagreement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from rpdi.metrics.evaluate import compute, load_qrels, load_runs
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.errors import InputError
from rpdi.metrics.view import Score, View
from rpdi.simulate import agents, vector
from rpdi.simulate.estimators import Moments
from rpdi.simulate.progress import progress_bar
from rpdi.simulate.ranking import BLOCK, block_rng, rankings_for, stream
from rpdi.simulate.settings import check_settings
from rpdi.simulate.stats import bennett_p, holm, p_values
from rpdi.simulate.work import check_work, steps
from rpdi.usermodels import exact, model_for

BATCHES = {"vector": vector.batch, "agent": agents.batch}  # many rankings at once (yielded), the same sessions
ZERO_VARIANCE = 1e-12  # a model's per-user variance below this (relative) counts as zero
RELATIVE = 1e-9  # closed form vs exact: relative tolerance, plus ABSOLUTE (rounding of sums
ABSOLUTE = 1e-12  # of many terms, and the exact evaluator stopping below 1e-15 of mass) near 0
ALPHA = 0.01  # family-wise error rate of the stochastic comparisons
CONFIRM_USERS = 2  # the confirmation stage simulates this many times the first stage's users
TRUNCATION = 1e-6  # rate's lower bound: the chance that any user reads past the bound used


@dataclass(frozen=True)
class Declared:
    """An expected difference between a closed form and its model's exact value: ``relation``
    says how they relate, ``expected(closed, model, ranking)`` gives the exact value the model
    must have on a :class:`simulate.ranking.Ranking`."""

    why: str
    relation: str
    expected: Callable


def _rbp_horizon(closed, model, ranking):
    return closed / (1 - model.p ** ranking.horizon)


def _words(model, ranking, i: int) -> float:
    """The length in words of the document at rank i + 1: the user's lengths file, else TBG's words."""
    return model.words if ranking.words is None or math.isnan(ranking.words[i]) else float(ranking.words[i])


def _tbg_random_time(closed, model, ranking) -> float:
    """E[G] = sum_k g_k prod_{i<k} E[exp(-lambda t_i)]: the user reaches rank k if the budget
    outlasts the time t_i spent at every rank before it, independent of each other, each the
    snippet's 4.4 s plus, with probability 0.64 (relevant) or 0.39 (not), the document's
    0.018 words + 7.8 s; g_k = 0.64 x 0.77 for a relevant document (Smucker & Clarke 2012,
    rank by rank with the paper's constants)."""
    lam = math.log(2) / model.halflife
    total, reach = 0.0, 1.0
    for i in range(min(len(ranking.gains), ranking.horizon)):
        relevant = ranking.gains[i] > 0
        words = _words(model, ranking, i)
        click = 0.64 if relevant else 0.39
        total += reach * (0.64 * 0.77 if relevant else 0.0)
        reach *= math.exp(-lam * 4.4) * (click * math.exp(-lam * (0.018 * words + 7.8)) + 1 - click)
    return total


DECLARED = {
    "TBG": Declared("random reading times: the model discounts each gain by E[exp(-lambda T_k)] over "
                    "the random time T_k to reach rank k, the closed form by exp(-lambda E[T_k]), which "
                    "is never larger (Jensen)", "exact = sum_k g_k prod_{i<k} E[exp(-lambda t_i)] >= closed form",
                    _tbg_random_time),
    "RBP": Declared("horizon truncation: a user still reading at rank D (the model's horizon) stops "
                    "there, so E[N] = (1 - p^D)/(1 - p)", "exact = closed form / (1 - p^D)", _rbp_horizon),
}


def _naive_sdcg(model, ranking, grades: np.ndarray, ideal: np.ndarray) -> float:
    """SDCG@k = sum_{i<=k} g_i / log2(i + 1) over sum_{i<=k} 1 / log2(i + 1) (Moffat 2013), by
    math.log2 rank by rank."""
    w = [1.0 / math.log2(i + 1) for i in range(1, model.k + 1)]
    g = list(ranking.gains[:model.k]) + [0.0] * (model.k - min(len(ranking.gains), model.k))
    return sum(x * y for x, y in zip(g, w)) / sum(w)


def _naive_inst(model, ranking, grades: np.ndarray, ideal: np.ndarray) -> float:
    """INST = sum_i V_i r_i / sum_i V_i over ranks 1..horizon, V_1 = 1, V_{i+1} = V_i C_i,
    C_i = ((i + T + T_i - 1)/(i + T + T_i))^2, T_i = T - r_1 - ... - r_i (Moffat, Bailey,
    Scholer & Thomas 2017), rank by rank."""
    v, seen, num, den = 1.0, 0.0, 0.0, 0.0
    for i in range(1, model.horizon + 1):
        r = float(ranking.gains[i - 1]) if i <= len(ranking.gains) else 0.0
        num, den, seen = num + v * r, den + v, seen + r
        c = (i + model.T + (model.T - seen) - 1) / (i + model.T + (model.T - seen))
        v *= c * c
    return num / den


def _naive_err(model, ranking, grades: np.ndarray, ideal: np.ndarray) -> float:
    """ERR@k = sum_{i<=k} (1/i) R_i prod_{j<i} (1 - R_j), R_i = (2^min(g_i, max) - 1) / 2^max
    for grades g_i (Chapelle, Metzler, Zhang & Grinspan 2009), rank by rank."""
    total, reach = 0.0, 1.0
    for i, g in enumerate(np.nan_to_num(grades[:model.k]), start=1):
        r = (2.0 ** min(float(g), model.max_rel) - 1.0) / 2.0 ** model.max_rel
        total, reach = total + reach * r / i, reach * (1.0 - r)
    return total


def _naive_tbg(model, ranking, grades: np.ndarray, ideal: np.ndarray) -> float:
    """TBG = sum_k 0.64 x 0.77 b_k exp(-lambda T(k)), T(k) = sum_{i<k} (4.4 + P(click | b_i)
    (0.018 words + 7.8)) the expected time to reach rank k, b_k = grade >= rel (Smucker & Clarke
    2012), rank by rank with the paper's constants."""
    lam, total, reach_time = math.log(2) / model.halflife, 0.0, 0.0
    for i, g in enumerate(grades):
        relevant = bool(g >= model.rel)
        words = _words(model, ranking, i)
        total += (0.64 * 0.77 if relevant else 0.0) * math.exp(-lam * reach_time)
        reach_time += 4.4 + (0.64 if relevant else 0.39) * (0.018 * words + 7.8)
    return total


def _naive_ndcg(model, ranking, grades: np.ndarray, ideal: np.ndarray) -> float | None:
    """nDCG@k = sum_{i<=k} gain(g_i) / log2(i + 1) over the same sum on the ideal ordering of the
    topic's judged grades (to rank k, or to its end without a cutoff), gain(g) = g or 2^g - 1
    (Järvelin & Kekäläinen 2002), rank by rank with math.log2 (None: trec_eval's level=gain pairs
    or an ideal of 0, where the closed form alone defines the number)."""
    if model.measure.params["level_gains"]:
        return None
    top = float(ideal[0]) if len(ideal) else 0.0
    shift = max(top - 50.0, 0.0)  # 2^g would overflow past g = 1023; the ratio is unchanged

    def gain(g):
        g = 0.0 if math.isnan(g) else float(g)
        return g if model.dcg == "log2" else 2.0 ** (g - shift) - 2.0 ** -shift

    k = len(grades) if model.k is None else model.k
    width = len(ideal) if model.k is None else min(model.k, len(ideal))
    actual = sum(gain(g) / math.log2(i + 1) for i, g in enumerate(grades[:k], start=1))
    best = sum(gain(max(g, 0.0)) / math.log2(i + 1) for i, g in enumerate(ideal[:width], start=1))
    return actual / best if best > 0 else None


# Plain re-derivations, rank by rank, from the ranking as the model sees it (gains, lengths), the
# grades and the topic's ideal grades, of closed forms whose helpers the model shares (the log
# discount, C/W/L's continuation, the exponential gain, TBG's constants and reading time): a slip
# in a shared helper moves closed form and model alike.
ORACLES = {"SDCG": _naive_sdcg, "INST": _naive_inst, "ERR": _naive_err, "TBG": _naive_tbg, "nDCG": _naive_ndcg}


def closed_vs_exact(model, closed: float, exact_value: float, ranking) -> tuple[bool, float, str]:
    """(agrees?, the exact value expected, relation) of one ranking's closed form and exact value
    on ``ranking`` (a :class:`simulate.ranking.Ranking`). Under convention stop the exact value
    compared is the one under ``nonrelevant`` (a closed form's convention)."""
    declared = DECLARED.get(model.measure.spec.name)
    relation = "exact = closed form" if declared is None else declared.relation
    expected = closed if declared is None else declared.expected(closed, model, ranking)
    ok = abs(exact_value - expected) <= RELATIVE * max(abs(expected), abs(exact_value)) + ABSOLUTE
    return bool(ok), float(expected), relation


def model_stderr(variance: float, value: float, users: int) -> float | None:
    """The standard error of a mean of ``users`` sessions under the model: sqrt(variance/users),
    exactly 0 where the model's outcome does not vary, None where the variance is unknown.

    This is the estimator's true standard deviation if the simulation follows the model, so
    z tests exactly that; a sample's own estimate of it fails for rare events (a relevant
    document deep in an RBP ranking that 6 users in 4000 are expected to reach)."""
    if not np.isfinite(variance):
        return None
    if variance <= ZERO_VARIANCE * (1 + value ** 2):
        return 0.0
    return float(np.sqrt(variance / users))


def simulate_ranking(model, ranking, users: int, task: np.random.SeedSequence, engine: str = "vector",
                     target_stderr: float | None = None, max_users: int = 10_000_000) -> Moments:
    """Moments of simulated sessions on one ranking, in blocks of BLOCK users with their own
    streams: ``users`` sessions, or with ``target_stderr`` as many blocks as it takes (at most
    ``max_users``) for the model's aggregation to reach that standard error."""
    return simulate_rankings(model, [ranking], users, [task], engine, target_stderr, max_users)[0]


def simulate_rankings(model, rankings: list, users: int, tasks: list, engine: str = "vector",
                      target_stderr: float | None = None, max_users: int = 10_000_000,
                      done: Callable[[], None] | None = None) -> list[Moments]:
    """:func:`simulate_ranking` of each ranking with its task, all at once: every block of every
    ranking is one lane of the engine's batch (the vector engine advances them together), or,
    with ``target_stderr``, block b of every ranking still simulating is one batch; each
    ranking's Moments are the same as simulated alone. ``done()`` is called as each ranking is
    finished (a progress bar's tick)."""
    moments = [Moments() for _ in rankings]
    if target_stderr is None:  # a known number of blocks: all blocks of all rankings in one batch
        blocks = -(-users // BLOCK)
        lanes = [(ranking, min(BLOCK, users - b * BLOCK), block_rng(task, b))
                 for ranking, task in zip(rankings, tasks) for b in range(blocks)]
        for lane, sessions in enumerate(BATCHES[engine](model, lanes)):
            moments[lane // blocks].add(*sessions)
            if done is not None and lane % blocks == blocks - 1:
                done()
        return moments
    todo = list(range(len(rankings)))
    blocks = -(-max_users // BLOCK)
    for block in range(blocks):
        n = min(BLOCK, max_users - block * BLOCK)
        lanes = [(rankings[k], n, block_rng(tasks[k], block)) for k in todo]
        last = block == blocks - 1
        for k, sessions in zip(todo, BATCHES[engine](model, lanes)):
            moments[k].add(*sessions)
            if done is not None and (last or _precise(moments[k], model, target_stderr)):
                done()
        todo = [k for k in todo if not _precise(moments[k], model, target_stderr)]
        if not todo:
            break
    return moments


def _precise(moments: Moments, model, target_stderr: float) -> bool:
    """Whether a ranking's simulation has reached the target standard error (after two blocks)."""
    se = moments.estimate(model.aggregation)[1]
    return moments.users >= 2 * BLOCK and bool(np.isfinite(se)) and se <= target_stderr


def mean_stats(mom: Moments, model, ex, s: int, t: int, ranking) -> dict:
    """What the verdict needs of one ranking's sample: the estimate, its standard error under
    the model and z; and for the bounds, the outcome X whose mean the estimate tests:
    X = G/N (mean_rate), G (total) or (G - R N)/E[N] (rate, R the exact rate: E[X] = 0 exactly,
    and the estimate's error is mean(X) E[N]/mean(N)), each divided by the ideal value for a
    normalised model. ``dev`` = mean(X) - E[X], ``var`` = Var(X) under the model, ``up``/``low``
    how far one user's X can lie above/below E[X], ``msd`` = mean (X - E[X])^2.

    The bounds come from the ranking: a session gains at most max(g_i, 1) at each rank with
    g_i > 0 (never less than the largest G observed, for plug-in models); for rate, X's lower
    bound -R m / E[N] holds unless some user reads past rank m, m the first rank with
    users x P(N > m) <= TRUNCATION (``slack`` carries that chance into the p-value)."""
    agg = model.aggregation
    scale = ex.ideal[t] if model.normalised else 1.0
    value, variance = ex.value[s, t], ex.variance[agg][s, t]
    n = mom.users
    est, sample_se = mom.estimate(agg)
    est = est / scale
    se = model_stderr(variance, value, n)
    if se is None:  # the model has no variance formula here: the sample's
        se = sample_se / scale
    g = ranking.gains
    g_max = max(float(np.where(g > 0, np.maximum(g, 1.0), 0.0).sum()), mom.hi["g"])
    out = {"users": n, "estimate": float(est), "stderr": se, "var": float(variance), "slack": 0.0}
    if agg == "rate":
        R, depth = value * scale, ex.values["depth"][s, t]
        if mom.never or not np.isfinite(depth) or depth == 0:
            return out | {"dev": None}
        reach = ex.reach[s, t]
        beyond = np.flatnonzero(n * reach <= TRUNCATION)  # reach[m] = P(N > m)
        m = int(beyond[0]) if beyond.size else len(reach)
        m = max(m, 1)
        out["slack"] = float(n * reach[m]) if m < len(reach) else 0.0
        mg, mn = _raw_mean(mom, "g"), _raw_mean(mom, "n")
        dev = (mg - R * mn) / depth
        a = mom.shift["g"] - R * mom.shift["n"]
        s1 = mom.s1["g"] - R * mom.s1["n"]
        s2 = mom.s2["g"] - 2 * R * mom.gn + R * R * mom.s2["n"]
        msd = (s2 + 2 * a * s1) / n + a * a
        up, low = g_max / depth, R * m / depth
        msd /= depth ** 2
    else:
        key = {"mean_rate": "r", "total": "g"}.get(agg)
        if key is None:
            return out | {"dev": None}
        mu = value * scale
        dev = _raw_mean(mom, key) - mu
        c = mom.shift[key] - mu
        msd = mom.s2[key] / n + 2 * c * mom.s1[key] / n + c * c
        top = g_max if key == "g" else max(min(g_max, max(1.0, float(g.max(initial=0.0)))), mom.hi["r"])
        up, low = top - mu, mu
    return out | {"dev": float(dev / scale), "up": float(max(up, 0.0) / scale),
                  "low": float(max(low, 0.0) / scale), "msd": float(max(msd, 0.0) / scale ** 2)}


def _raw_mean(mom: Moments, k: str) -> float:
    return mom.shift[k] + mom.s1[k] / mom.users


def simulate(qrels, runs, measures: Iterable[str], *, users: int = 10_000, seed: int = 0,
             engine: str = "vector", per_topic: bool = False, convention: str = "unknown",
             topics: str = "qrels", target_stderr: float | None = None,
             max_users: int = 10_000_000, progress: bool = False, alpha: float = ALPHA,
             with_verdict: bool = False, force: bool = False):
    """Closed form, exact expectation and simulation side by side; a list of flat records
    ``{"run", "topic", "measure", "aggregation", "closed_form", "exact", "estimate", "stderr",
    "z", "users"}``, one per (run, topic) with ``per_topic`` and one per (run, measure) with
    topic ``"all"`` (means over topics; the stderr of a mean of independent estimates).
    ``users=0`` skips sampling. stderr is the standard error of the estimate under the model
    (see :func:`model_stderr`; rate by the delta method), z = (estimate - exact) / stderr, null
    where stderr is 0: the model's outcome does not vary, and estimate and exact must be equal.
    Undefined values (R = 0) are null and left out of means. With ``with_verdict`` it returns
    (records, :func:`verdict` of every comparison at family-wise error rate ``alpha``). Settings are
    validated as on the command line (:mod:`simulate.settings`); a simulation estimated beyond
    :data:`simulate.work.TIME_LIMIT` seconds of work is refused unless ``force``."""
    check_settings(dict(users=users, seed=seed, engine=engine, convention=convention, topics=topics,
                        target_stderr=target_stderr, max_users=max_users, force=force))
    if not 0 < alpha < 1:
        raise InputError(f"alpha: must be between 0 and 1, not {alpha}")
    models = [model_for(m) for m in measures]
    qrels, runs = load_qrels(qrels), load_runs(runs)
    rankings = build_rankings(qrels, runs, topics)
    records, expectations, cells = three_way(
        rankings, models, users=users, seed=seed, engine=engine, per_topic=per_topic, convention=convention,
        target_stderr=target_stderr, max_users=max_users, progress=progress, force=force)
    cells += reading_cells(qrels, runs, rankings)
    if not with_verdict:
        return records
    by_measure = {m.measure.text: (m, ex) for m, ex in zip(models, expectations)}

    def confirm(cell):
        model, ex = by_measure[cell["measure"]]
        return confirmation(rankings, model, ex, cell, seed=seed, convention=convention)

    return records, verdict(cells, alpha, confirm)


def three_way(rankings, models, *, users: int, seed: int, engine: str, per_topic: bool,
              convention: str, target_stderr: float | None, max_users: int,
              progress: bool = False, force: bool = False) -> tuple[list[dict], list, list[dict]]:
    """:func:`simulate` on built :class:`metrics.rankings.Rankings` and models; also returns each
    model's :class:`usermodels.exact.Expectations` and the verdict's cells (:func:`verdict`)."""
    closed = [compute(rankings, [model.measure])[0] if model.measure.spec.method == "closed_form"
              else Score(np.full(rankings.present.shape, np.nan)) for model in models]
    records, cells = [], []
    sampling = bool(users or target_stderr)
    expectations = [exact(model, rankings, convention) for model in models]
    if sampling:  # the exact E[N] first, to refuse unbounded work before it starts
        check_work(steps(expectations, rankings.present, users, target_stderr, max_users), engine, force)
    bar = progress_bar(len(models) * int(rankings.present.sum()), progress and sampling, "ranking")
    for model, cf, ex in zip(models, closed, expectations):
        m = model.measure
        # a closed form is its user under trec_eval's padding (the tail read as non-relevant); under
        # convention stop the user stops at the list's end instead, and only the simulation tests it
        ex_closed = ex if convention != "stop" else exact(model, rankings, "nonrelevant")
        relation_note = "" if convention != "stop" else ", exact under convention nonrelevant"
        view = View(rankings, model.k)
        rows = rankings_for(model, view, convention)
        simulated = {}
        if sampling:  # every ranking of the measure at once (each on its own stream)
            keys = [(s, t) for s in range(len(rankings.runs)) for t in np.flatnonzero(rankings.present[s])
                    if np.isfinite(ex.value[s, t])]
            tasks = [stream(seed, rankings.runs[s], str(rankings.topics[t]), m.text) for s, t in keys]
            cells.append(streams_cell(m.text, [(rankings.runs[s], str(rankings.topics[t])) for s, t in keys], tasks))
            simulated = dict(zip(keys, simulate_rankings(model, [rows[k] for k in keys], users, tasks, engine,
                                                         target_stderr, max_users, lambda: bar.update(1))))
        for s, run in enumerate(rankings.runs):
            topic_records, topic_stats = [], []
            for t in np.flatnonzero(rankings.present[s]):
                topic = str(rankings.topics[t])
                ident = {"run": run, "topic": topic, "measure": m.text}
                cfv, exv, exc = cf.value[s, t], ex.value[s, t], ex_closed.value[s, t]
                if np.isfinite(cfv) and np.isfinite(exc):
                    ok, expected, relation = closed_vs_exact(model, float(cfv), float(exc), rows[s, t])
                    cells.append(ident | {"kind": "closed_vs_exact", "closed_form": float(cfv), "exact": float(exc),
                                          "expected": expected, "relation": relation + relation_note, "ok": ok})
                    naive = ORACLES.get(m.spec.name)
                    if naive is not None and m.cutoff == model.k:
                        want = naive(model, rows[s, t], view.grade[s, t], view.ideal[t])
                        if want is not None:
                            ok = abs(cfv - want) <= RELATIVE * abs(want) + ABSOLUTE
                            cells.append(ident | {"kind": "oracle", "closed_form": float(cfv), "expected": want,
                                                  "ok": bool(ok)})
                stats = None
                if (s, t) in simulated:
                    stats = mean_stats(simulated[s, t], model, ex, s, t, rows[s, t])
                    topic_stats.append(stats)
                    if stats["stderr"] == 0:  # a rare event the sample missed moves the mean by < sqrt(var)
                        ok = abs(stats["estimate"] - exv) <= np.sqrt(ZERO_VARIANCE * (1 + exv ** 2))
                        cells.append(ident | {"kind": "zero_variance", "engine": engine, "estimate": stats["estimate"],
                                              "exact": float(exv), "ok": bool(ok)})
                rec = _record(run, topic, m.text, model.aggregation, cfv, exv,
                              None if stats is None else stats["estimate"], None if stats is None else stats["stderr"],
                              0 if stats is None else stats["users"])
                topic_records.append(rec)
                if rec["z"] is not None:
                    cells.append(ident | {"kind": "mean", "engine": engine, "estimate": rec["estimate"],
                                          "exact": rec["exact"], "z": rec["z"], "users": rec["users"]})
            if per_topic:
                records += topic_records
            mean_rec = _mean_record(run, m.text, model.aggregation, topic_records)
            records.append(mean_rec)
            ident = {"run": run, "topic": "all", "measure": m.text, "engine": engine}
            if mean_rec["z"] is not None and len(topic_records) > 1:
                cells.append(ident | {"kind": "mean", "estimate": mean_rec["estimate"], "exact": mean_rec["exact"],
                                      "z": mean_rec["z"], "users": mean_rec["users"]})
            v = variance_test(topic_stats)
            if v is not None:
                cells.append(ident | {"kind": "variance", "sample": v["sample"], "model": v["model"],
                                      "z": v["d"] / np.sqrt(v["V"]), "users": mean_rec["users"]})
    bar.close()
    return records, expectations, cells


def reading_cells(qrels, runs, rankings) -> list[dict]:
    """One exact check per run that its rankings are trec_eval's order: each topic's documents
    sorted again by a plain sort on (score, docno), both descending (docno in byte order), and
    their grades (0 unjudged) compared with the built rankings'. Independent of the vectorised
    reader, it is the only check that sees a reading bug both the closed forms and the models
    inherit (a reversed tie-break). Topics whose run lists a document twice, or whose qrels
    judge a document twice, are left out (their reading is a convention, not a rule)."""
    judged, twice = {}, set()
    for t, d, g in zip(qrels.topic.tolist(), qrels.docno.tolist(), qrels.grade.tolist()):
        if (t, d) in judged:
            twice.add(t)
        judged[(t, d)] = max(g, 0.0)
    topic_index = {str(t): i for i, t in enumerate(rankings.topics)}
    cells = []
    for s, run in enumerate(runs):
        lines: dict[str, list] = {}
        for t, d, x in zip(run.topic.tolist(), run.docno.tolist(), run.score.tolist()):
            lines.setdefault(t, []).append((x, d))
        wrong = []
        for t, docs in lines.items():
            i = topic_index.get(t)
            if i is None or t in twice or len({d for _, d in docs}) < len(docs):
                continue
            want = [judged.get((t, d), 0.0) for _, d in sorted(docs, reverse=True)]
            have = rankings.grade[s, i, :rankings.length[s, i]].tolist()
            if have != want:
                wrong.append(t)
        cells.append({"kind": "reading", "run": run.name, "topic": wrong[0] if wrong else "all", "measure": "-",
                      "ok": not wrong, "wrong_topics": len(wrong)})
    return cells


def streams_cell(measure: str, idents: list[tuple[str, str]], tasks: list) -> dict:
    """Every test below assumes each ranking's users independent of every other ranking's, so
    each (run, topic) task must draw from its own stream: a deterministic check that the first
    draw of each task's first block of users differs from every other task's. A stream shared
    by the topics of a run makes them all move together, which no per-ranking test can see and
    the test of the mean over topics sees only where the topics' rankings are alike."""
    first: dict[int, tuple[str, str]] = {}
    shared = []
    for ident, task in zip(idents, tasks):
        x = int(block_rng(task, 0).integers(2 ** 63))
        if x in first:
            shared.append((first[x], ident))
        first.setdefault(x, ident)
    return {"run": "all", "topic": "all", "measure": measure, "kind": "streams", "tasks": len(tasks),
            "shared": shared, "ok": not shared}


def variance_test(stats: list[dict]) -> dict | None:
    """The sample's mean square deviations from the exact values against the model's per-user
    variances, summed over rankings: d = sum (msd - var). Each user's Y = (X - E X)^2 has mean
    var and lies in [0, B^2] (B = max(up, low)), so Var(Y) <= E[Y^2] <= B^2 var: the bound on
    d's variance needs no fourth moment. Returns d, that variance bound V and Bennett's ranges,
    or None when no ranking both varies and has bounds."""
    rows = [x for x in stats if x.get("dev") is not None and x["var"] > 0 and x["stderr"]]
    if not rows:
        return None
    b2 = [max(x["up"], x["low"]) ** 2 for x in rows]
    return {"d": sum(x["msd"] - x["var"] for x in rows),
            "V": sum(b * x["var"] / x["users"] for b, x in zip(b2, rows)),
            "up": max(b / x["users"] for b, x in zip(b2, rows)),
            "low": max(x["var"] / x["users"] for x in rows),
            "slack": sum(x["slack"] for x in rows),
            "sample": float(np.mean([x["msd"] for x in rows])), "model": float(np.mean([x["var"] for x in rows]))}


def mean_test(stats: list[dict]) -> dict | None:
    """The mean over rankings of the outcomes' deviations, d = (1/T) sum dev_t, with its variance
    V = sum var_t / (n_t T^2) and Bennett's ranges (a single ranking: T = 1)."""
    rows = [x for x in stats if x.get("dev") is not None]
    if not rows or len(rows) < len(stats):
        return None
    T = len(rows)
    return {"d": sum(x["dev"] for x in rows) / T, "V": sum(x["var"] / x["users"] for x in rows) / T ** 2,
            "up": max(x["up"] / x["users"] for x in rows) / T, "low": max(x["low"] / x["users"] for x in rows) / T,
            "slack": sum(x["slack"] for x in rows)}


def confirmation(rankings, model, ex, cell: dict, *, seed: int, convention: str) -> float:
    """The confirmation p-value of a flagged cell: its rankings simulated again on an
    independent stream (run, topic, measure and the key ``confirm``) with CONFIRM_USERS
    times the users per ranking of the first stage, tested with Bennett's bound
    (:func:`rpdi.simulate.stats.bennett_p`)."""
    s = rankings.runs.index(cell["run"])
    present = np.flatnonzero(rankings.present[s])
    if cell["topic"] != "all":
        present = [t for t in present if str(rankings.topics[t]) == cell["topic"]]
    users = CONFIRM_USERS * max(1, cell["users"])  # a cell's users are per topic, also for "all"
    rows = rankings_for(model, View(rankings, model.k), convention)
    present = [t for t in present if np.isfinite(ex.value[s, t])]
    tasks = [stream(seed, cell["run"], str(rankings.topics[t]), model.measure.text, "confirm") for t in present]
    moments = simulate_rankings(model, [rows[s, t] for t in present], users, tasks, cell["engine"])
    stats = [mean_stats(mom, model, ex, s, t, rows[s, t]) for t, mom in zip(present, moments)]
    test = variance_test(stats) if cell["kind"] == "variance" else mean_test(stats)
    if test is None:
        return 1.0
    return bennett_p(test["d"], test["V"], test["up"], test["low"], test["slack"])


EXACT_CHECKS = ("reading", "streams", "oracle", "closed_vs_exact", "zero_variance")


def verdict(cells: list[dict], alpha: float, confirm: Callable[[dict], float]) -> dict:
    """ONE verdict over every comparison. Deterministic cells (closed form vs exact, zero-variance
    simulations) must hold exactly. The stochastic cells (per ranking and per mean over topics,
    each engine, and the variance checks) form one family at family-wise error rate ``alpha``:

    1. screen: two-sided normal p-values of their z-scores, Holm at ``alpha``;
    2. confirm: each screened-out cell is simulated again on an independent stream
       (``confirm(cell)`` returns a Bennett p-value, valid for any skew), Holm at ``alpha``
       over the screened-out cells.

    A false alarm needs stage 2 to reject a true hypothesis; given the screened set (a function
    of stage 1's stream only) Holm on independent valid p-values rejects one with probability at
    most alpha, so the family-wise error rate is at most alpha whatever stage 1's accuracy.
    Returns ``{"status": 0 agree | 1 disagree, "alpha", "counts", "failures", "marginal"}``;
    each failure is a cell with its numbers, each marginal cell (screened out, not confirmed)
    says what would settle it."""
    failures = [c for c in cells if c["kind"] in EXACT_CHECKS and not c["ok"]]
    stochastic = [c for c in cells if c["kind"] in ("mean", "variance")]
    flagged = []
    if stochastic:
        p1 = p_values([c["z"] for c in stochastic])
        flagged = [c | {"p_screen": float(p)} for c, p, r in zip(stochastic, p1, holm(p1, alpha)) if r]
    marginal = []
    if flagged:
        p2 = np.array([confirm(c) for c in flagged])
        for c, p, r in zip(flagged, p2, holm(p2, alpha)):
            c["p_confirm"] = float(p)
            (failures if r else marginal).append(c)
    counts = {kind: sum(c["kind"] == kind for c in cells) for kind in EXACT_CHECKS + ("mean", "variance")}
    counts["screened"] = len(flagged)
    return {"status": 1 if failures else 0, "alpha": alpha, "counts": counts,
            "failures": failures, "marginal": marginal}


def describe(v: dict) -> list[str]:
    """The verdict as lines for a terminal: the decision, then each failing and marginal cell."""
    c = v["counts"]
    lines = [f"verdict: {'AGREE' if v['status'] == 0 else 'DISAGREE'} (exit {v['status']}): "
             f"{c['reading']} ranking-order, {c['streams']} stream-independence, {c['oracle']} naive-formula, {c['closed_vs_exact']} closed-vs-exact "
             f"and {c['zero_variance']} "
             f"zero-variance exact checks; "
             f"{c['mean']} mean and {c['variance']} variance tests in one family at family-wise error rate "
             f"alpha = {v['alpha']:g} ({c['screened']} screened out by Holm on z, each re-tested on an "
             f"independent stream with Bennett's bound)"]
    for x in v["failures"]:
        lines.append("  FAIL " + _cell_text(x))
    for x in v["marginal"]:
        lines.append("  marginal " + _cell_text(x) + "; not confirmed on an independent stream: more users "
                     "(or another seed) would settle it")
    return lines


def _cell_text(x: dict) -> str:
    where = f"run {x['run']}, topic {x['topic']}, {x['measure']}"
    if x["kind"] == "reading":
        return (f"run {x['run']}, topic {x['topic']}: ranking order differs from a plain sort by (score, docno) "
                f"descending on {x['wrong_topics']} topics")
    if x["kind"] == "streams":
        (r1, t1), (r2, t2) = x["shared"][0]
        return (f"{x['measure']}: {len(x['shared'])} of {x['tasks']} rankings draw the same users as another "
                f"(run {r1}, topic {t1} and run {r2}, topic {t2}): the streams are not keyed by the task")
    if x["kind"] == "oracle":
        return (f"{where}: closed form vs its plain rank-by-rank formula: closed form {x['closed_form']:.12g}, "
                f"formula {x['expected']:.12g}")
    if x["kind"] == "closed_vs_exact":
        want = f"expected {x['expected']:.12g}" if x["expected"] is not None else "expected exact >= closed form"
        return (f"{where}: closed form vs exact ({x['relation']}): closed form {x['closed_form']:.12g}, "
                f"exact {x['exact']:.12g}, {want}")
    if x["kind"] == "zero_variance":
        return (f"{where}, {x['engine']} engine: simulated vs exact where the outcome does not vary: "
                f"estimate {x['estimate']:.12g}, exact {x['exact']:.12g}")
    p = f"screen p {x['p_screen']:.2g}" + (f", confirmation p {x['p_confirm']:.2g}" if "p_confirm" in x else "")
    if x["kind"] == "variance":
        return (f"{where}, {x['engine']} engine: sample variance vs model variance: mean square deviation "
                f"{x['sample']:.6g}, model {x['model']:.6g}, z {x['z']:.2f}, {p}")
    return (f"{where}, {x['engine']} engine: simulated vs exact: estimate {x['estimate']:.6g}, exact "
            f"{x['exact']:.6g}, z {x['z']:.2f}, {x['users']} users, {p}")


def _num(x):
    return None if x is None or not np.isfinite(x) else float(x)


def _record(run, topic, measure, aggregation, closed_form, exact_value, estimate, stderr, users) -> dict:
    z = None
    if estimate is not None and stderr is not None and stderr > 0 and np.isfinite(exact_value):
        z = float((estimate - exact_value) / stderr)
    return {"run": run, "topic": str(topic), "measure": measure, "aggregation": aggregation,
            "closed_form": _num(closed_form), "exact": _num(exact_value), "estimate": _num(estimate),
            "stderr": _num(stderr), "z": z, "users": int(users)}


def _mean_record(run, measure, aggregation, topic_records) -> dict:
    defined = [r for r in topic_records if r["exact"] is not None]

    def mean(key):
        values = [r[key] for r in defined]
        return float(np.mean(values)) if defined and None not in values else None

    est = se = None
    if defined and all(r["estimate"] is not None for r in defined):
        est = mean("estimate")
        se = float(np.sqrt(sum(r["stderr"] ** 2 for r in defined))) / len(defined)
    # users per topic, as --users counts them: the mean over the topics simulated
    simulated = [r["users"] for r in topic_records if r["users"]]
    return _record(run, "all", measure, aggregation, mean("closed_form"), mean("exact") if defined else np.nan,
                   est, se, round(np.mean(simulated)) if simulated else 0)
