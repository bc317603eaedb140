"""Any measure's name, rpdi's, ir_measures' or trec_eval's, resolved to a
:class:`~metrics.measures.registry.Measure`."""

from __future__ import annotations

from dataclasses import replace

from rpdi.metrics.errors import InputError
from rpdi.metrics.ir_measures_names import ir_measures_text, translate
from rpdi.metrics.measures.registry import MEASURES, Measure, intent_aware_spec, parse_declared, split_name
from rpdi.metrics.trec_names import suggest_name, trec_lines


def parse_measure(text) -> Measure:
    """A measure named as rpdi names it (``NAME(param=value, ...)@cutoff``, see
    :func:`~metrics.measures.registry.parse_declared`), as ir_measures does (its aliases, such as
    ``MAP`` and ``NDCG@10``, and its ``Measure`` objects: :mod:`metrics.ir_measures_names`) or else
    as trec_eval names one line of its output (``P_10``, ``map``; its grades then read as
    trec_eval reads them).

    >>> m = parse_measure("RBP(p=0.95)@10")
    >>> m.spec.name, m.params["p"], m.cutoff
    ('RBP', 0.95, 10)
    >>> parse_measure("P_10").spec.name, parse_measure("P_10").integer_grades
    ('P', True)
    >>> parse_measure("MRR@10").spec.name
    'RR'
    """
    if not isinstance(text, str):
        foreign = ir_measures_text(text)
        if foreign is None:
            raise InputError(f"measure {text!r}: a measure is a name or an ir_measures Measure, "
                             f"not {type(text).__name__}")
        text = foreign
    rpdi_text = translate(text)
    name = split_name(rpdi_text)[0]
    if name in MEASURES or intent_aware_spec(name, MEASURES):
        return replace(parse_declared(rpdi_text), text=text)
    lines = trec_lines(text, strict=False)
    if lines is not None and len(lines) == 1 and lines[0].measure is not None:
        return replace(lines[0].measure, text=text)  # integer_grades, as trec_lines made it
    raise InputError(f"measure {text!r}: unknown measure {name!r}{suggest_name(name)} (see `rpdi measures`)")
