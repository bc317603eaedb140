"""The three-way agreement check: closed form, exact expectation, simulated users."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from rpdi.metrics.evaluate import compute, load_qrels, load_runs
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.trec import InputError
from rpdi.metrics.view import Score, View
from rpdi.simulate import agents, vector
from rpdi.simulate.estimators import Moments
from rpdi.simulate.progress import progress_bar
from rpdi.simulate.ranking import BLOCK, block_rng, rankings_for, stream
from rpdi.usermodels import CONVENTIONS, exact, model_for

ENGINES = {"vector": vector.sessions, "agent": agents.sessions}
ZERO_VARIANCE = 1e-12  # a model's per-user variance below this (relative) counts as zero


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
    run_sessions = ENGINES[engine]
    moments = Moments()
    limit = max_users if target_stderr is not None else users
    block = 0
    while moments.users < limit:
        n = min(BLOCK, limit - moments.users)
        G, N, cost = run_sessions(model, ranking, n, block_rng(task, block))
        moments.add(G, N, cost)
        block += 1
        if target_stderr is not None:
            se = moments.estimate(model.aggregation)[1]
            if moments.users >= 2 * BLOCK and np.isfinite(se) and se <= target_stderr:
                break
    return moments


def simulate(qrels, runs, measures: Iterable[str], *, users: int = 10_000, seed: int = 0,
             engine: str = "vector", per_topic: bool = False, convention: str = "unknown",
             topics: str = "qrels", target_stderr: float | None = None,
             max_users: int = 10_000_000, progress: bool = False) -> list[dict]:
    """Closed form, exact expectation and simulation side by side; a list of flat records
    ``{"run", "topic", "measure", "aggregation", "closed_form", "exact", "estimate", "stderr",
    "z", "users"}``, one per (run, topic) with ``per_topic`` and one per (run, measure) with
    topic ``"all"`` (means over topics; the stderr of a mean of independent estimates).
    ``users=0`` skips sampling. stderr is the standard error of the estimate under the model
    (see :func:`model_stderr`; rate by the delta method), z = (estimate - exact) / stderr, null
    where stderr is 0: the model's outcome does not vary, and estimate and exact must be equal.
    Undefined values (R = 0) are null and left out of means."""
    if engine not in ENGINES:
        raise InputError(f"engine: expected one of {', '.join(ENGINES)}, not {engine!r}")
    if convention not in CONVENTIONS:
        raise InputError(f"convention: expected one of {', '.join(CONVENTIONS)}, not {convention!r}")
    if users < 0:
        raise InputError(f"users: must be >= 0, not {users}")
    models = [model_for(m) for m in measures]
    rankings = build_rankings(load_qrels(qrels), load_runs(runs), topics)
    return three_way(rankings, models, users=users, seed=seed, engine=engine, per_topic=per_topic,
                             convention=convention, target_stderr=target_stderr, max_users=max_users,
                             progress=progress)[0]


def three_way(rankings, models, *, users: int, seed: int, engine: str, per_topic: bool,
                      convention: str, target_stderr: float | None, max_users: int,
                      progress: bool = False) -> tuple[list[dict], list]:
    """:func:`simulate` on built :class:`metrics.rankings.Rankings` and models; also returns each
    model's :class:`usermodels.exact.Expectations`."""
    closed = [compute(rankings, [model.measure])[0] if model.measure.spec.compute is not None
              else Score(np.full(rankings.present.shape, np.nan)) for model in models]
    records, expectations = [], []
    sampling = bool(users or target_stderr)
    bar = progress_bar(len(models) * int(rankings.present.sum()), progress and sampling, "ranking")
    for model, cf in zip(models, closed):
        m = model.measure
        ex = exact(model, rankings, convention)
        expectations.append(ex)
        rows = rankings_for(model, View(rankings, model.k), convention) if sampling else {}
        ideal = ex.ideal
        for s, run in enumerate(rankings.runs):
            topic_records = []
            for t in np.flatnonzero(rankings.present[s]):
                est = se = None
                n = 0
                if sampling and np.isfinite(ex.value[s, t]):
                    task = stream(seed, run, str(rankings.topics[t]), m.text)
                    mom = simulate_ranking(model, rows[s, t], users, task, engine, target_stderr, max_users)
                    est, sample_se = mom.estimate(model.aggregation)
                    if model.normalised:
                        est = est / ideal[t]
                    n = mom.users
                    se = model_stderr(ex.variance[model.aggregation][s, t], ex.value[s, t], n)
                    if se is None:  # the model has no variance formula here: the sample's
                        se = sample_se / (ideal[t] if model.normalised else 1.0)
                    bar.update(1)
                topic_records.append(_record(run, rankings.topics[t], m.text, model.aggregation,
                                             cf.value[s, t], ex.value[s, t], est, se, n))
            if per_topic:
                records += topic_records
            records.append(_mean_record(run, m.text, model.aggregation, topic_records))
    bar.close()
    return records, expectations


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
    return _record(run, "all", measure, aggregation, mean("closed_form"), mean("exact") if defined else np.nan,
                   est, se, sum(r["users"] for r in topic_records))
