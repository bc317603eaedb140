"""Properties of a browsing model: the analyser of :mod:`metrics.properties` fed by exact values."""

from __future__ import annotations

from rpdi.metrics.properties import Analysis, analyse, grades_for
from rpdi.usermodels.exact import exact


def model_scorer(model_for_depth):
    """A scorer from a browsing model's exact expectation (beyond the ranking: non-relevant).

    ``model_for_depth(n)`` gives the model at depth n (its measure's cutoff set to n)."""
    return lambda rankings, n: exact(model_for_depth(n), rankings, convention="nonrelevant").value[0]


def analyse_model(model, k: int | None = None) -> Analysis:
    """The seven properties of a browsing model at depth k (default: its cutoff, else 10)."""
    measure = model.measure
    k = k or measure.cutoff or 10
    cls = type(model)
    return analyse(model_scorer(lambda n: cls(measure.at_depth(n))), k=int(k), grades=grades_for(measure))
