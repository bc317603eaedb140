"""One model's comparisons on built rankings (a batch of runs, or all): closed form, exact
expectation and simulated users per ranking and per run's mean, as records and the verdict's cells.

:class:`ModelCheck` gives, for each run of the rankings, its flat records (one per (run, topic)
and per run's mean over topics) and cells (:mod:`simulate.cells`): the exact checks of
:mod:`simulate.exact_checks`, and per ranking and per run the z-scores of the mean and of the
variance (:mod:`simulate.sample`). A run's records and cells are its own: they do not depend on
the other runs ranked with it (given the rankings' depth and the exact evaluator's extent:
:mod:`simulate.runs`).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.view import View
from rpdi.simulate.batch import simulate_rankings
from rpdi.simulate.cells import Cell, ClosedVsExact, Defined, Dispersion, Mean, Variance, ZeroVariance
from rpdi.simulate.confirm import confirm_stream, ranking_stream
from rpdi.simulate.exact_checks import closed_vs_exact, first_draw, oracle_cell
from rpdi.simulate.ranking import rankings_for
from rpdi.simulate.sample import ZERO_VARIANCE, dispersion, mean_stats, variance_test


class ModelCheck:
    """One model's comparisons on built rankings: its closed form ``cf``, exact expectations
    ``ex`` and those the closed form is compared with, ``ex_closed`` (a closed form is its user
    under trec_eval's padding, the tail read as non-relevant: under convention stop, where the
    user stops at the list's end instead, the exact values under convention nonrelevant, and only
    the simulation tests ``ex``), and, once :meth:`simulate` ran, its simulated sessions per ranking."""

    def __init__(self, rankings, model, cf, ex, ex_closed, convention: str, engine: str):
        self.rankings, self.model, self.cf, self.engine = rankings, model, cf, engine
        self.ex, self.ex_closed = ex, ex_closed
        self.relation_note = "" if convention != "stop" else ", exact under convention nonrelevant"
        self.view = View(rankings, model.k)
        self.rows = rankings_for(model, self.view, convention)
        self.simulated = {}
        self.sequential = False  # users simulated until a target standard error: no dispersion test

    def simulate(self, users, seed, target_stderr, max_users, done) -> tuple[list, list, list]:
        """Every ranking of the measure at once, each on its own stream; what the streams' check
        needs of them (:func:`simulate.exact_checks.streams_cell`): the rankings' (run, topic),
        the first draw of each one's stream and of the stream the confirmation stage would use."""
        rankings, text = self.rankings, self.model.measure.text
        self.sequential = target_stderr is not None
        keys = [(s, t) for s in range(len(rankings.runs)) for t in np.flatnonzero(rankings.present[s])
                if np.isfinite(self.ex.value[s, t])]
        tasks = [ranking_stream(seed, rankings.runs[s], str(rankings.topics[t]), text, self.engine) for s, t in keys]
        self.simulated = dict(zip(keys, simulate_rankings(self.model, [self.rows[k] for k in keys], users, tasks,
                                                          self.engine, target_stderr, max_users, done)))
        idents = [(rankings.runs[s], str(rankings.topics[t])) for s, t in keys]
        confirming = [confirm_stream(seed, run, topic, text, self.engine) for run, topic in idents]
        return idents, list(map(first_draw, tasks)), list(map(first_draw, confirming))

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
