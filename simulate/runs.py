"""``simulate`` over many runs, a batch at a time: memory bounded by a batch, not by the number of runs.

The runs are read in the batches of :func:`metrics.run_files.run_batches` (runs up to its
BATCH_BYTES of files, or one run alone); each batch is ranked, compared three ways
(:func:`simulate.three_way.compare_batch`) and let go, and only the records and the verdict's
cells are kept (:class:`simulate.three_way.Tally`). The records, cells and verdict are those of
all runs compared at once, bit for bit. A run's values do not depend on the runs ranked with it,
but for two things of the whole collection, which a first pass over the batches (the survey,
:func:`survey`) finds before any user is simulated:

- the depth of the rankings: a sum over a whole ranking (a closed form without a cutoff) is
  rounded by the width its rankings are padded to, the longest ranking ranked with it, so every
  batch is padded to the longest of all (:func:`metrics.rankings.deepened`), as ``rpdi compare`` does;
- the ranks the exact evaluator propagates: it goes on while users on any ranking it carries
  are still reading (:func:`usermodels.exact.exact`), so every batch propagates as far as the
  farthest (:func:`usermodels.exact.extent`).

The survey computes each batch's exact expectations for that, and so the simulation's work too,
which is refused, if too large, before any user is simulated (:func:`simulate.work.check_work`:
the estimate is the sum of the batches' on their own rankings); and the progress bar's total,
and the check that each run's rankings are trec_eval's order (:func:`simulate.exact_checks.reading_cells`).
With one batch (runs of less than BATCH_BYTES together, the usual case) the survey's rankings and
expectations are the comparison's, and nothing is read twice; with more, the runs are read again.
The verdict's confirmation stage reads again the run of each cell it confirms (a cell flagged by
the first stage: seldom).

Under ``ties="expected"`` every run is read at once, in one batch: the tie orders' variants are
the collection's (:class:`usermodels.tie_orders.TieOrders`, as many as the most of any ranking).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.rankings import deepened
from rpdi.metrics.run_files import item_name, items_read_once, load_runs, run_batches
from rpdi.metrics.ties import reorderings
from rpdi.simulate.cells import Cell
from rpdi.simulate.confirm import confirmation
from rpdi.simulate.exact_checks import reading_cells
from rpdi.simulate.three_way import compared, expectations_of
from rpdi.simulate.work import check_work, steps
from rpdi.usermodels.exact import alike, extent, wider
from rpdi.usermodels.tie_orders import TieOrders, population_rate


def simulate_runs(qrels, runs, models: list, rank, *, ties: str, users: int, seed: int, engine: str,
                  per_topic: bool, convention: str, target_stderr: float | None, max_users: int, progress: bool,
                  force: bool) -> tuple[list[dict], list[Cell], Callable]:
    """(records, cells, the verdict's confirmation of a cell) of :func:`simulate.api.simulate` on
    ``qrels`` (read) and ``runs`` (anything :func:`metrics.run_files.run_items` takes), read a
    batch at a time; ``rank(runs)`` gives the :class:`~metrics.rankings.Rankings` of a list of Runs
    (:func:`simulate.api.rankings_of`). Under ``ties="expected"`` the models that read a tie are
    :class:`TieOrders` users and the records have their ``population_rate``."""
    items = items_read_once(runs)
    measures = [m.measure for m in models]
    batches = _at_once(items) if ties == "expected" else run_batches(items, measures)
    sampling = bool(users or target_stderr)
    found = survey(qrels, batches, rank, models, ties=ties, seed=seed, convention=convention,
                   work=(users, target_stderr, max_users) if sampling else None)
    if sampling:
        check_work(found.work, engine, force)
    models = found.models
    batches = [found.only] if found.only is not None else _ranked(items, measures, rank, found, convention)
    records, cells = compared(batches, models, found.rankings, progress, closed=None, users=users, seed=seed,
                              engine=engine, per_topic=per_topic, convention=convention, target_stderr=target_stderr,
                              max_users=max_users)
    if ties == "expected":  # one batch
        rankings, expectations = found.only
        _population_rates(records, models, [ex for ex, _ in expectations], rankings)
    return records, cells + found.reading, _confirmer(items, rank, found, seed, convention)


def _ranked(items: list, measures: list, rank, found: Survey, convention: str):
    """Each batch of runs read again, ranked and padded to the deepest of all, with its models'
    expectations propagated as far as on all runs."""
    for batch in run_batches(items, measures):
        rankings = deepened(rank(batch), found.depth)
        del batch  # the runs go before the next batch is read; their rankings, once compared
        expectations = expectations_of(found.models, rankings, convention, found.extents)
        yield rankings, expectations
        del rankings, expectations


def _at_once(items: list):
    """Every run in one batch (read when the survey comes to it, let go of after it)."""
    yield load_runs(items)


@dataclass
class Survey:
    """What comparing a batch of runs needs of all runs (see the module): the models (under
    ties="expected" the TieOrders users), the depth of the longest ranking, each model's extents
    (:func:`usermodels.exact.extent` under the convention, and under convention stop that of the
    exact values under nonrelevant that the closed forms are compared with), the simulation's
    work (user-document steps, :func:`simulate.work.steps`), the rankings to simulate per model,
    the reading cells of every run, and with one batch its (rankings, expectations)."""

    models: list
    depth: int = 0
    extents: list = field(default_factory=list)
    work: float = 0.0
    rankings: int = 0
    reading: list[Cell] = field(default_factory=list)
    batches: int = 0
    only: tuple | None = None


def survey(qrels, batches, rank, models: list, *, ties: str, seed: int, convention: str,
           work: tuple | None) -> Survey:
    """The :class:`Survey` of the batches of runs, each ranked and valued exactly once and let go
    (but the only one's); ``work``: (users, target_stderr, max_users) of a simulation to estimate."""
    found = Survey(models)
    topic_qrels = getattr(qrels, "topic_qrels", lambda: qrels)()
    for runs in batches:
        found.only = rankings = expectations = None  # the batch before let go of before this one is ranked
        rankings = rank(runs)
        if ties == "expected":  # a model that reads no tie is simulated as without ties, on the same streams
            found.models = [TieOrders(m, seed) if next(reorderings(rankings, m.measure), None) else m for m in models]
        found.reading += reading_cells(topic_qrels, runs, rankings)
        del runs
        expectations = expectations_of(found.models, rankings, convention)
        extents = [(extent(ex), extent(closed) if convention == "stop" else None) for ex, closed in expectations]
        for model, (a, _), (x, _) in zip(found.models, found.extents, extents):
            if not alike(a, x):
                raise InputError(f"{model.measure.text}: a mixture whose number of variants depends on the runs "
                                 f"({len(a)} for some, {len(x)} for others) is not simulated a batch of runs at a "
                                 f"time; give every collection the same variants (weight 0 where one does not apply)")
        found.extents = extents if not found.extents else [
            (wider(a, x), None if b is None else wider(b, y)) for (a, b), (x, y) in zip(found.extents, extents)]
        found.depth = max(found.depth, rankings.depth)
        found.rankings += int(rankings.present.sum())
        if work is not None:
            found.work += steps([ex for ex, _ in expectations], rankings.present, *work)
        found.batches += 1
        found.only = rankings, expectations
    if found.batches > 1:
        found.only = None
    return found


def _confirmer(items: list, rank, found: Survey, seed: int, convention: str) -> Callable:
    """The verdict's confirmation of a cell (:func:`simulate.confirm.confirmation`): on the
    rankings of its run, those compared (one batch) or its run read again, padded and valued as
    among all runs."""
    by_measure = {m.measure.text: k for k, m in enumerate(found.models)}
    names = [item_name(r) for r in items]

    @lru_cache(maxsize=1)  # a model's cells of a run come together
    def read_again(run: str, k: int) -> tuple:
        rankings = deepened(rank(load_runs([items[names.index(run)]])), found.depth)
        (ex, _), = expectations_of([found.models[k]], rankings, convention, [found.extents[k]])
        return rankings, ex

    def confirm(cell):
        k = by_measure[cell.measure]
        if found.only is not None:
            rankings, ex = found.only[0], found.only[1][k][0]
        else:
            rankings, ex = read_again(cell.run, k)
        return confirmation(rankings, found.models[k], ex, cell, seed=seed, convention=convention)

    return confirm


def _population_rates(records: list[dict], models: list, expectations: list, rankings) -> None:
    """Add ``population_rate`` to the records of :class:`TieOrders` users (see
    :func:`simulate.api.simulate`): per topic the population's E[G]/E[N] over the orders, for a
    run's "all" its mean over the topics where the exact value is defined (as ``exact``'s mean is)."""
    runs = {run: s for s, run in enumerate(rankings.runs)}
    topics = {str(t): i for i, t in enumerate(rankings.topics)}
    rates = {m.measure.text: (population_rate(ex) if isinstance(m, TieOrders) else ex.value,
                              rankings.present & np.isfinite(ex.value))
             for m, ex in zip(models, expectations) if m.aggregation == "rate"}
    for r in records:
        r["population_rate"] = None
        if r["measure"] not in rates:
            continue
        rate, defined = rates[r["measure"]]
        s = runs[r["run"]]
        if r["topic"] != "all":
            r["population_rate"] = float(rate[s, topics[r["topic"]]])
        elif defined[s].any():
            r["population_rate"] = float(rate[s][defined[s]].mean())
