"""The three-way comparison: closed form, exact expectation and simulated users, per ranking and per mean.

:func:`three_way` computes, for each model, its closed form and exact expectations on built
rankings, simulates its users (each ranking on a stream of its own), and returns the flat
records (one per (run, topic) and per run's mean over topics) and the verdict's cells
(:mod:`simulate.cells`): the exact checks of :mod:`simulate.exact_checks`, and per ranking and
per run the z-scores of the mean and of the variance (:mod:`simulate.sample`).

Runs read a batch at a time (:mod:`simulate.runs`) go through the same steps (:func:`compared`):
each batch's rankings are compared by :func:`compare_batch` into the models' :class:`Tally`,
which keeps only records and cells, and :func:`tallied` puts them in the order of all runs
compared at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rpdi.metrics.evaluate import compute
from rpdi.metrics.view import Score
from rpdi.simulate.cells import Cell
from rpdi.simulate.exact_checks import streams_cell
from rpdi.simulate.model_check import ModelCheck
from rpdi.simulate.progress import progress_bar
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
    sampling = bool(users or target_stderr)
    expectations = expectations_of(models, rankings, convention)
    if sampling:  # the exact E[N] first, to refuse unbounded work before it starts
        check_work(steps([ex for ex, _ in expectations], rankings.present, users, target_stderr, max_users),
                   engine, force)
    records, cells = compared([(rankings, expectations)], models, int(rankings.present.sum()), progress,
                              closed=closed, users=users, seed=seed, engine=engine, per_topic=per_topic,
                              convention=convention, target_stderr=target_stderr, max_users=max_users)
    return records, [ex for ex, _ in expectations], cells


def compared(batches, models, rankings: int, progress: bool, **settings) -> tuple[list[dict], list[Cell]]:
    """The records and cells of every model's comparisons on each (rankings, expectations) of
    ``batches`` (all runs at once, or one batch of them after another), in the order of all runs
    compared at once (:func:`compare_batch`, :func:`tallied`); a progress bar over ``rankings``
    rankings a model. ``settings``: :func:`compare_batch`'s."""
    sampling = bool(settings["users"] or settings["target_stderr"])
    bar = progress_bar(len(models) * rankings, progress and sampling, "ranking")
    tallies = [Tally() for _ in models]
    for batch, expectations in batches:
        compare_batch(batch, models, expectations, tallies, bar, **settings)
        del batch, expectations  # (let go of before the next batch is ranked)
    bar.close()
    return tallied(models, tallies, sampling)


def expectations_of(models, rankings, convention: str, extents: list | None = None) -> list[tuple]:
    """Each model's exact expectations on the rankings under ``convention`` and those its closed
    form is compared with (under convention stop, those under nonrelevant: :class:`ModelCheck`);
    ``extents`` (per model, a pair of :func:`usermodels.exact.extent`): the ranks propagated on
    all runs, for a batch of them."""
    out = []
    for model, (ranks, closed_ranks) in zip(models, extents or [(None, None)] * len(models)):
        ex = exact(model, rankings, convention, ranks=ranks)
        out.append((ex, ex if convention != "stop" else exact(model, rankings, "nonrelevant", ranks=closed_ranks)))
    return out


@dataclass
class Tally:
    """What is kept of one model's comparisons across batches of runs: the records and cells of
    its runs so far, and for the streams' check the (run, topic) and first draw of each ranking's
    stream and of its confirmation stream (:meth:`ModelCheck.simulate`)."""

    records: list[dict] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    idents: list[tuple[str, str]] = field(default_factory=list)
    draws: list[int] = field(default_factory=list)
    confirming: list[int] = field(default_factory=list)


def compare_batch(rankings, models, expectations: list[tuple], tallies: list[Tally], bar, *,
                  closed: list[Score] | None, users: int, seed: int, engine: str, per_topic: bool,
                  convention: str, target_stderr: float | None, max_users: int) -> None:
    """Each model's comparisons on the rankings of a batch of runs (or all), with its
    expectations (:func:`expectations_of`), added to its tally; ``bar`` ticks once per ranking
    simulated."""
    if closed is None:
        closed = [compute(rankings, [model.measure])[0] if model.measure.spec.method == "closed_form"
                  else Score(np.full(rankings.present.shape, np.nan)) for model in models]
    for model, cf, (ex, ex_closed), tally in zip(models, closed, expectations, tallies):
        check = ModelCheck(rankings, model, cf, ex, ex_closed, convention, engine)
        if users or target_stderr:
            idents, draws, confirming = check.simulate(users, seed, target_stderr, max_users, lambda: bar.update(1))
            tally.idents += idents
            tally.draws += draws
            tally.confirming += confirming
        for s in range(len(rankings.runs)):
            run_records, run_cells = check.run(s, per_topic)
            tally.records += run_records
            tally.cells += run_cells


def tallied(models, tallies: list[Tally], sampling: bool) -> tuple[list[dict], list[Cell]]:
    """The records and cells of every model's tally, model after model (with ``sampling`` its
    streams' check first, over the streams of all its rankings: :func:`simulate.exact_checks.streams_cell`)."""
    records, cells = [], []
    for model, tally in zip(models, tallies):
        if sampling:
            idents = tally.idents + [(run, f"{topic} (confirmation)") for run, topic in tally.idents]
            cells.append(streams_cell(model.measure.text, idents, tally.draws + tally.confirming))
        records += tally.records
        cells += tally.cells
    return records, cells
