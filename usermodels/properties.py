"""Properties of a browsing model: the analyser of :mod:`metrics.properties` fed by exact values."""

from __future__ import annotations

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.names import parse_measure
from rpdi.metrics.properties import Analysis, analyse, closed_form_scorer, grades_for
from rpdi.metrics.records import records_frame
from rpdi.usermodels.base import BrowsingModel
from rpdi.usermodels.exact import exact
from rpdi.usermodels.plugin import is_plugin
from rpdi.usermodels.scoring import measure_list, resolve


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


def properties(measures, *, model: bool = False, as_frame: bool = False):
    """Moffat's seven properties of each measure (a name, or a model of one's own by file or
    module): records ``{"measure", "bounded", ..., "realizable", "counterexamples", "search"}``
    (:meth:`metrics.properties.Analysis.record`) of its closed form, or with ``model`` (always
    for a model of one's own) of its browsing model's exact expectation; with ``as_frame`` a
    pandas DataFrame of them (the properties as ``boolean``, the counterexamples as dicts).

    >>> frame = properties(["P@5", "RBP(p=0.8)"], as_frame=True)
    >>> frame[["measure", "monotonic", "top_weighted"]]
          measure  monotonic  top_weighted
    0         P@5      False         False
    1  RBP(p=0.8)       True          True
    """
    from rpdi.usermodels import model_for

    records = []
    for given in measure_list(measures):
        text = resolve(given)  # a name, or the Measure of a model or of a name
        text = text.text if isinstance(text, Measure) else text
        try:
            if model or is_plugin(text) or isinstance(given, (BrowsingModel, type)):
                analysis = analyse_model(model_for(given))
            else:
                m = parse_measure(text)
                analysis = analyse(closed_form_scorer(m), k=int(m.cutoff or 10), grades=grades_for(m))
        except MemoryError as exc:
            reason = (str(exc).splitlines() or ["out of memory"])[0]
            raise InputError(f"measure {text!r}: its depth is too large to analyse ({reason})") from None
        records.append(analysis.record(text))
    return records_frame(records) if as_frame else records
