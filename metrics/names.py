"""Any measure's name, rpdi's or trec_eval's, resolved to a :class:`~metrics.measures.registry.Measure`."""

from __future__ import annotations

from dataclasses import replace

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import MEASURES, Measure, parse_declared, split_name
from rpdi.metrics.trec_names import suggest_name, trec_lines


def parse_measure(text: str) -> Measure:
    """A measure named as rpdi names it (``NAME(param=value, ...)@cutoff``, see
    :func:`~metrics.measures.registry.parse_declared`) or else as trec_eval names one line of its output
    (``P_10``, ``map``; its grades then read as trec_eval reads them).

    >>> m = parse_measure("RBP(p=0.95)@10")
    >>> m.spec.name, m.params["p"], m.cutoff
    ('RBP', 0.95, 10)
    >>> parse_measure("P_10").spec.name, parse_measure("P_10").integer_grades
    ('P', True)
    """
    name = split_name(text)[0]
    if name in MEASURES:
        return parse_declared(text)
    lines = trec_lines(text, strict=False)
    if lines is not None and len(lines) == 1 and lines[0].measure is not None:
        return replace(lines[0].measure, text=text)  # integer_grades, as trec_lines made it
    raise InputError(f"measure {text!r}: unknown measure {name!r}{suggest_name(name)} (see `rpdi measures`)")
