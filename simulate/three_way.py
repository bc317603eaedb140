"""The three-way comparison: closed form, exact expectation and simulated users, per ranking and per mean.

:func:`three_way` computes, for each model, its closed form and exact expectations on built
rankings, simulates its users (each ranking on a stream of its own), and returns the flat
records (one per (run, topic) and per run's mean over topics) and the verdict's cells
(:mod:`simulate.cells`): the exact checks of :mod:`simulate.exact_checks`, and per ranking and
per run the z-scores of the mean and of the variance (:mod:`simulate.sample`).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.evaluate import compute
from rpdi.metrics.view import Score, View
from rpdi.simulate.batch import simulate_rankings
from rpdi.simulate.cells import Cell, ClosedVsExact, Defined, Dispersion, Mean, Variance, ZeroVariance
from rpdi.simulate.confirm import confirm_stream, ranking_stream
from rpdi.simulate.exact_checks import closed_vs_exact, oracle_cell, streams_cell
from rpdi.simulate.progress import progress_bar
from rpdi.simulate.ranking import rankings_for
from rpdi.simulate.sample import ZERO_VARIANCE, dispersion, mean_stats, variance_test
from rpdi.simulate.work import check_work, steps
from rpdi.usermodels import exact


def three_way(rankings, models, *, users: int, seed: int, engine: str, per_topic: bool,
              convention: str, target_stderr: float | None, max_users: int,
              progress: bool = False, force: bool = False, closed: list[Score] | None = None
              ) -> tuple[list[dict], list, list[Cell]]:
    """:func:`simulate.api.simulate` on built :class:`metrics.rankings.Rankings` and models; also
    returns each model's :class:`usermodels.exact.Expectations` and the verdict's cells.
    ``closed``: each model's closed-form values, where they are not its measure's on the rankings
    (over judgment worlds: :mod:`simulate.worlds`)."""
    if closed is None:
        closed = [compute(rankings, [model.measure])[0] if model.measure.spec.method == "closed_form"
                  else Score(np.full(rankings.present.shape, np.nan)) for model in models]
    records, cells = [], []
    sampling = bool(users or target_stderr)
    expectations = [exact(model, rankings, convention) for model in models]
    if sampling:  # the exact E[N] first, to refuse unbounded work before it starts
        check_work(steps(expectations, rankings.present, users, target_stderr, max_users), engine, force)
    bar = progress_bar(len(models) * int(rankings.present.sum()), progress and sampling, "ranking")
    for model, cf, ex in zip(models, closed, expectations):
        check = _ModelCheck(rankings, model, cf, ex, convention, engine)
        if sampling:
            cells.append(check.simulate(users, seed, target_stderr, max_users, lambda: bar.update(1)))
        for s in range(len(rankings.runs)):
            run_records, run_cells = check.run(s, per_topic)
            records += run_records
            cells += run_cells
    bar.close()
    return records, expectations, cells


class _ModelCheck:
    """One model's comparisons on built rankings: its closed form ``cf``, exact expectations
    ``ex`` and, once :meth:`simulate` ran, its simulated sessions per ranking."""

    def __init__(self, rankings, model, cf, ex, convention: str, engine: str):
        self.rankings, self.model, self.cf, self.ex, self.engine = rankings, model, cf, ex, engine
        # a closed form is its user under trec_eval's padding (the tail read as non-relevant); under
        # convention stop the user stops at the list's end instead, and only the simulation tests it
        self.ex_closed = ex if convention != "stop" else exact(model, rankings, "nonrelevant")
        self.relation_note = "" if convention != "stop" else ", exact under convention nonrelevant"
        self.view = View(rankings, model.k)
        self.rows = rankings_for(model, self.view, convention)
        self.simulated = {}
        self.sequential = False  # users simulated until a target standard error: no dispersion test

    def simulate(self, users, seed, target_stderr, max_users, done) -> Cell:
        """Every ranking of the measure at once, each on its own stream; the streams' check, over
        these streams and those the confirmation stage would use."""
        rankings, text = self.rankings, self.model.measure.text
        self.sequential = target_stderr is not None
        keys = [(s, t) for s in range(len(rankings.runs)) for t in np.flatnonzero(rankings.present[s])
                if np.isfinite(self.ex.value[s, t])]
        tasks = [ranking_stream(seed, rankings.runs[s], str(rankings.topics[t]), text, self.engine) for s, t in keys]
        self.simulated = dict(zip(keys, simulate_rankings(self.model, [self.rows[k] for k in keys], users, tasks,
                                                          self.engine, target_stderr, max_users, done)))
        idents = [(rankings.runs[s], str(rankings.topics[t])) for s, t in keys]
        confirming = [confirm_stream(seed, run, topic, text, self.engine) for run, topic in idents]
        return streams_cell(text, idents + [(run, f"{topic} (confirmation)") for run, topic in idents],
                            tasks + confirming)

    def run(self, s: int, per_topic: bool) -> tuple[list[dict], list[Cell]]:
        """Run s's records (its topics' with ``per_topic``, then its mean over topics) and cells:
        each topic's, whether the model is defined where the closed form is, the mean over topics,
        the variance test and the run's share of the family's dispersion test (with a fixed number
        of users: a sequential sample's z^2 need not have mean 1)."""
        run, text, agg = self.rankings.runs[s], self.model.measure.text, self.model.aggregation
        topic_records, topic_stats, cells = [], [], []
        for t in np.flatnonzero(self.rankings.present[s]):
            record, stats, topic_cells = self.topic(s, t)
            topic_records.append(record)
            cells += topic_cells
            if stats is not None:
                topic_stats.append(stats)
        closed = [r for r in topic_records if r["closed_form"] is not None]
        if closed:
            both = sum(r["exact"] is not None for r in closed)
            cells.append(Defined(run=run, topic="all", measure=text, closed=len(closed), both=both, ok=both > 0))
        mean_rec = _mean_record(run, text, agg, topic_records)
        ident = {"run": run, "topic": "all", "measure": text, "engine": self.engine}
        if mean_rec["z"] is not None and len(topic_records) > 1:
            cells.append(Mean(**ident, estimate=mean_rec["estimate"], exact=mean_rec["exact"], z=mean_rec["z"],
                              users=mean_rec["users"]))
        v = variance_test(topic_stats)
        if v is not None:
            cells.append(Variance(**ident, sample=v["sample"], model=v["model"], z=v["d"] / np.sqrt(v["V"]),
                                  users=mean_rec["users"]))
        d = None if self.sequential else dispersion(topic_stats)
        if d is not None:
            cells.append(Dispersion(**ident, **d, users=mean_rec["users"]))
        return (topic_records if per_topic else []) + [mean_rec], cells

    def topic(self, s: int, t: int) -> tuple[dict, dict | None, list[Cell]]:
        """Ranking (s, t)'s record, sample statistics (None: not simulated) and cells."""
        model, row = self.model, self.rows[s, t]
        run, topic = self.rankings.runs[s], str(self.rankings.topics[t])
        ident = {"run": run, "topic": topic, "measure": model.measure.text}
        cfv, exv, exc = self.cf.value[s, t], self.ex.value[s, t], self.ex_closed.value[s, t]
        cells = []
        if np.isfinite(cfv) and np.isfinite(exc):
            ok, expected, relation = closed_vs_exact(model, float(cfv), float(exc), row)
            cells.append(ClosedVsExact(**ident, closed_form=float(cfv), exact=float(exc), expected=expected,
                                       relation=relation + self.relation_note, ok=ok))
            oracle = oracle_cell(model, ident, float(cfv), row, self.view.grade[s, t], self.view.ideal[t])
            if oracle is not None:
                cells.append(oracle)
        stats = None
        if (s, t) in self.simulated:
            stats = mean_stats(self.simulated[s, t], model, self.ex, s, t, row)
            if stats["stderr"] == 0:  # a rare event the sample missed moves the mean by < sqrt(var)
                ok = abs(stats["estimate"] - exv) <= np.sqrt(ZERO_VARIANCE * (1 + exv ** 2))
                cells.append(ZeroVariance(**ident, engine=self.engine, estimate=stats["estimate"], exact=float(exv),
                                          ok=bool(ok)))
        rec = _record(run, topic, model.measure.text, model.aggregation, cfv, exv,
                      None if stats is None else stats["estimate"], None if stats is None else stats["stderr"],
                      0 if stats is None else stats["users"])
        if rec["z"] is not None:
            cells.append(Mean(**ident, engine=self.engine, estimate=rec["estimate"], exact=rec["exact"], z=rec["z"],
                              users=rec["users"]))
        return rec, stats, cells


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
