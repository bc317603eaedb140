"""``rpdi simulate`` on uncertain grades: every measure's user over judgment worlds, three ways.

Each measure's browsing model is carried over the worlds by
:class:`usermodels.uncertain_user.GradeAveraged` (a model whose step reads only the current gain;
others are refused by name). Then, per ranking:

- **closed form**: the expectation over worlds of the measure's closed form
  (:func:`metrics.uncertain_scores.spread`), where it is exact (enumeration of the topic's
  worlds, or the linear path) and the model's aggregation is ``total`` or ``mean_rate`` (for
  ``rate`` the expectation of each world's E[G]/E[N] is not the averaged user's rate: not
  compared), else none;
- **exact**: the grade-averaged user's exact expectation (E over worlds of E[G], E[G/N]; for rate
  E[G]/E[N] over the users of every world);
- **simulated users**: each user meets a world of its own, its grades drawn as it reads them.

The verdict judges them like any other (closed form vs exact to 1e-9, simulation vs exact by z).

>>> from rpdi.metrics.uncertain import uncertain_from_dict
>>> q = uncertain_from_dict({"q": {"a": {0: 0.5, 1: 0.5}, "b": 1}})
>>> records, verdict = simulate_worlds(q, {"r": {"q": {"a": 2.0, "b": 1.0}}}, ["RR"], users=4000, seed=1)
>>> r, = records
>>> r["closed_form"], r["exact"], verdict.status
(0.75, 0.75, 0)
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.uncertain_scores import join, spread
from rpdi.metrics.view import Score
from rpdi.simulate.confirm import confirmation
from rpdi.simulate.three_way import three_way
from rpdi.simulate.verdict import ALPHA, verdict
from rpdi.usermodels import model_for
from rpdi.usermodels.uncertain_user import GradeAveraged, NotCarried


def simulate_worlds(qrels, runs, measures, *, users: int = 10_000, seed: int = 0, engine: str = "vector",
                    per_topic: bool = False, convention: str = "unknown", topics: str = "qrels",
                    target_stderr: float | None = None, max_users: int = 10_000_000, progress: bool = False,
                    alpha: float = ALPHA, force: bool = False):
    """(records, verdict) of :func:`simulate.api.simulate` over the judgment worlds of ``qrels``."""
    j = join(qrels, runs, topics)
    models = [averaged(model_for(m), j) for m in measures]
    rankings = models[0].rankings()
    closed = [closed_over_worlds(j, model, seed) for model in models]
    try:
        records, expectations, cells = three_way(
            rankings, models, users=users, seed=seed, engine=engine, per_topic=per_topic, convention=convention,
            target_stderr=target_stderr, max_users=max_users, progress=progress, force=force, closed=closed)
    except NotCarried as exc:
        raise InputError(f"{exc}; rpdi eval gives its expectation over judgment worlds") from None
    by_measure = {m.measure.text: (m, ex) for m, ex in zip(models, expectations)}

    def confirm(cell):
        model, ex = by_measure[cell.measure]
        return confirmation(rankings, model, ex, cell, seed=seed, convention=convention)

    return records, verdict(cells, alpha, confirm)


def averaged(model, j) -> GradeAveraged:
    """The model's user over the worlds of ``j``; InputError naming the measure if not covered."""
    try:
        return GradeAveraged(model, j)
    except InputError as exc:
        raise InputError(f"measure {model.measure.text!r}: {exc}; rpdi eval gives its expectation over judgment "
                         f"worlds") from None


def closed_over_worlds(j, model: GradeAveraged, seed: int) -> Score:
    """The expectation over worlds of the measure's closed form where exact and comparable with
    the model's value (see the module), NaN elsewhere."""
    user = model.user
    shape = j.ids.present.shape
    if user.measure.spec.method != "closed_form" or user.aggregation == "rate" or user.declared is not None:
        return Score(np.full(shape, np.nan))
    s = spread(j, user.measure, seed=seed)
    exact = np.isin(s.path, ("enumeration", "linear"))[None, :]
    return Score(np.where(exact & j.ids.present, s.topic.mean, np.nan))
