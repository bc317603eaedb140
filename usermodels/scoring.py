"""Every browsing model is a measure: what scores runs with a model that has no closed form.

A measure whose only definition is its user (a model of one's own, say) is valued by the exact
expectation of that user under the aggregation it declares (:class:`usermodels.exact.ExactValue`), on
every ranking, with the interval that unjudged documents and the unknown tail beyond the ranking
leave (the ``unknown`` convention: the value takes them as non-relevant, the upper end as
maximally relevant; the residual is the interval's width). Records say which of the two a value
is: ``method`` is ``closed_form`` or ``exact``.

:func:`evaluate` and :func:`score` are :func:`metrics.evaluate` and :func:`metrics.score` that
also take a model of one's own by name (``path.py:Class(...)``, ``package.module:Class(...)``),
as a class or as an instance. Qrels with grade distributions (a file with ``grade:probability``
pairs, ``{topic: {docno: {grade: probability}}}``, :class:`metrics.uncertain.UncertainQrels`) are
evaluated over judgment worlds by :func:`metrics.uncertain_eval.evaluate` (its options, records
with the expectation, sd, interval and path); every grade certain, they are ordinary qrels. With a
diversity or intent-aware measure asked for, a dict of dicts of dicts is diversity qrels
``{topic: {subtopic: {docno: grade}}}`` instead (:func:`metrics.uncertain_eval.is_uncertain`).

>>> from rpdi.usermodels.examples.two_strikes import TwoStrikes
>>> score(TwoStrikes(n=2), [1, 0, 0, 1])  # reads 3 documents, gains 1: E[G]/E[N]
0.3333333333333333
"""

from __future__ import annotations

import functools

from rpdi.metrics import evaluate as metrics_evaluate
from rpdi.metrics import score as metrics_score
from rpdi.metrics.errors import InputError
from rpdi.metrics.ir_measures_names import ir_measures_text
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.uncertain import UncertainQrels
from rpdi.metrics.records import records_frame
from rpdi.metrics.uncertain_eval import evaluate as evaluate_worlds, is_uncertain, judgments
from rpdi.usermodels.base import BrowsingModel
from rpdi.usermodels.plugin import is_plugin, load_plugin


def _is_measure(measure) -> bool:
    return (isinstance(measure, (str, Measure, BrowsingModel)) or ir_measures_text(measure) is not None
            or isinstance(measure, type) and issubclass(measure, BrowsingModel))


def measure_list(measures) -> list:
    """The measures an entry point is given, as a list: one measure (a name, a Measure, an
    ir_measures Measure, a BrowsingModel class or instance) is a list of one; InputError for
    anything else.

    >>> measure_list("P@5"), measure_list(("P@5", "AP"))
    (['P@5'], ['P@5', 'AP'])
    """
    if _is_measure(measures):
        return [measures]
    try:
        listed = list(measures)
    except TypeError:
        raise InputError(f"measures: a measure or a list of measures, not {type(measures).__name__}") from None
    for m in listed:
        if not _is_measure(m):
            raise _not_a_measure(m)
    return listed


def _not_a_measure(measure) -> InputError:
    return InputError(f"measure {measure!r}: a measure is a name, a Measure, an ir_measures Measure or a "
                      f"BrowsingModel (class or instance), not {type(measure).__name__}")


def resolve(measure, base: str | None = None):
    """A measure as :mod:`metrics` takes it: a model of one's own named by file or module (a
    file relative to ``base``, then to the working directory), a BrowsingModel class (its
    default parameters) or instance becomes its :class:`Measure`, an ir_measures Measure its
    name; other names and Measures are returned as they are."""
    if isinstance(measure, type) and issubclass(measure, BrowsingModel):
        measure = measure()
    if isinstance(measure, BrowsingModel):
        return measure.measure
    if isinstance(measure, str) and is_plugin(measure):
        return load_plugin(measure, base).measure
    if isinstance(measure, (str, Measure)):
        return measure
    if ir_measures_text(measure) is not None:
        return ir_measures_text(measure)
    raise _not_a_measure(measure)


@functools.wraps(metrics_evaluate)
def evaluate(qrels, runs, measures, *, as_frame: bool = False, **options):
    measures = [resolve(m) for m in measure_list(measures)]
    if is_uncertain(qrels, measures):  # grade distributions: scores over judgment worlds
        qrels = judgments(qrels)
        if isinstance(qrels, UncertainQrels):
            records = evaluate_worlds(qrels, runs, measures, **options)
            return records_frame(records) if as_frame else records
    return metrics_evaluate(qrels, runs, measures, as_frame=as_frame, **options)


@functools.wraps(metrics_score)
def score(measure, grades, **options) -> float:
    return metrics_score(resolve(measure), grades, **options)
