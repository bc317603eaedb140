"""The verdict's confirmation stage: a screened-out cell simulated again, on an independent stream.

The first stage's z-tests assume normal estimates; a cell they flag is re-tested here with
Bennett's inequality (:func:`simulate.stats.bennett_p`), valid whatever the outcome's skew, on
users drawn from streams keyed by (run, topic, measure, "confirm"), which share no draw with the
first stage's (run, topic, measure) (both keyed by the engine too, unless it is the vector
one): the independence the verdict's error rate rests on.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.seeds import stream
from rpdi.metrics.view import View
from rpdi.simulate.batch import simulate_rankings
from rpdi.simulate.cells import Dispersion, Stochastic, Variance
from rpdi.simulate.ranking import rankings_for
from rpdi.simulate.sample import dispersion, mean_stats, mean_test, variance_test
from rpdi.simulate.stats import bennett_p

CONFIRM_USERS = 2  # the confirmation stage simulates this many times the first stage's users


def ranking_stream(seed: int, run: str, topic: str, measure: str, engine: str, *stage: str) -> np.random.SeedSequence:
    """A ranking's stream in the first stage: keyed by (run, topic, measure), and by the engine's
    name for an engine other than the vector one, so that two engines checking the same measure
    (the agent check of ``rpdi run``) draw independent users, as the dispersion test and the
    joint hypothesis, which pool their cells, assume."""
    return stream(seed, run, topic, measure, *(() if engine == "vector" else (engine,)), *stage)


def confirm_stream(seed: int, run: str, topic: str, measure: str, engine: str) -> np.random.SeedSequence:
    """A ranking's stream in the confirmation stage: keyed by "confirm" as well, so that it shares
    no draw with the first stage's stream (the streams check of :mod:`simulate.three_way`
    verifies it on every ranking)."""
    return ranking_stream(seed, run, topic, measure, engine, "confirm")


def confirmation(rankings, model, ex, cell: Stochastic | Dispersion, *, seed: int,
                 convention: str) -> float | list[dict]:
    """The confirmation of a flagged cell: its rankings simulated again on an independent stream
    (run, topic, measure and the key ``confirm``) with CONFIRM_USERS times the users per ranking
    of the first stage. For a Mean or Variance cell, the p-value of Bennett's bound
    (:func:`rpdi.simulate.stats.bennett_p`); for a run's Dispersion cell, the new sample's
    terms of the dispersion test, one per ranking it sums (``z2``, its variance ``bound`` and
    ``slack``, as :func:`rpdi.simulate.sample.dispersion` counts them): the verdict pools every
    run's and tests them by :func:`rpdi.simulate.stats.dispersion_p`."""
    s = rankings.runs.index(cell.run)
    present = np.flatnonzero(rankings.present[s])
    if cell.topic != "all":
        present = [t for t in present if str(rankings.topics[t]) == cell.topic]
    users = CONFIRM_USERS * max(1, cell.users)  # a cell's users are per topic, also for "all"
    rows = rankings_for(model, View(rankings, model.k), convention)
    present = [t for t in present if np.isfinite(ex.value[s, t])]
    tasks = [confirm_stream(seed, cell.run, str(rankings.topics[t]), model.measure.text, cell.engine) for t in present]
    moments = simulate_rankings(model, [rows[s, t] for t in present], users, tasks, cell.engine)
    stats = [mean_stats(mom, model, ex, s, t, rows[s, t]) for t, mom in zip(present, moments)]
    if isinstance(cell, Dispersion):
        terms = [dispersion([x]) for x in stats]
        return [{"z2": d["sum_z2"], "bound": d["bound"], "slack": d["slack"]} for d in terms if d is not None]
    test = variance_test(stats) if isinstance(cell, Variance) else mean_test(stats)
    if test is None:
        return 1.0
    return bennett_p(test["d"], test["V"], test["up"], test["low"], test["slack"])
