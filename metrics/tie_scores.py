"""What ``--ties`` asks of the commands: each measure over the orders of tied documents.

``ties="trec_eval"`` (the default) is trec_eval's order, equal scores broken by docno
(descending): today's numbers, bit for bit. ``"expected"`` gives every measure's expectation
over uniformly random orders within each tie group (:func:`metrics.ties.expected`), ``"range"``
its minimum and maximum over them (:func:`metrics.ties.span`) next to trec_eval's value. Records
then carry, besides :func:`metrics.evaluate.evaluate`'s fields:

- ``ties``: how the values were found (``closed_form``, ``linear``, ``enumeration``,
  ``sampling``, ``sorted``, joined with ``+`` over the topics; ``unchanged`` where no tie is read);
- with ``expected``: ``stderr``, the standard error that sampled orders leave (0 where every
  value is exact; over topics sqrt(sum se_t^2)/n for a mean, sqrt(sum se_t^2) for a sum);
- with ``range``: ``low`` and ``high``. Over topics a run's range is the mean (sum, geometric
  mean) of its topics' minima and maxima: the orders of different topics are independent and
  these aggregations grow with each topic's value, so that is the range of the aggregate.

Over topics, an expectation is aggregated as a value is: the mean of the topics' expectations
is the expectation of the mean; the geometric mean (gm_map) of the topics' expected APs is NOT
the expected geometric mean (Jensen), and says so in its name only here. A micro average (a
ratio of pooled sums) over orders is refused: the ratio of expected sums is not the expected
ratio, and rpdi does not pick one silently. Measures that compare runs (RBO) or read subtopics
are refused by :mod:`metrics.ties`.

>>> from rpdi.metrics.evaluate import evaluate
>>> qrels, run = {"q": {"a": 1, "b": 0}}, {"s": {"q": {"a": 1.0, "b": 1.0}}}
>>> [(r["value"], r["ties"]) for r in evaluate(qrels, run, ["RR"], ties="expected")]
[(0.75, 'closed_form')]
>>> [(r["value"], r["low"], r["high"]) for r in evaluate(qrels, run, ["RR"], ties="range")]  # b read first
[(0.5, 0.5, 1.0)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpdi.choices import TIES
from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.view import Score


def check_ties(ties: str, allowed: tuple[str, ...] = TIES, where: str = "ties") -> None:
    """InputError unless ``ties`` is one of ``allowed``."""
    if ties not in allowed:
        raise InputError(f"{where}: expected one of {', '.join(allowed)}, not {ties!r}")


@dataclass(frozen=True)
class TieScore:
    """One measure over tie orders: ``score`` the value reported (the expectation, or trec_eval's
    order's value under range), ``path`` (S, T) how each was found, ``stderr`` (S, T) (expected)
    or ``low`` and ``high`` (S, T) (range)."""

    how: str
    score: Score
    path: np.ndarray
    stderr: np.ndarray | None = None
    low: np.ndarray | None = None
    high: np.ndarray | None = None


def tie_scores(rankings: Rankings, measures: list[Measure], ties: str, compat: str,
               integer_rankings: Rankings | None, today: list[Score]) -> list[TieScore]:
    """Each measure's :class:`TieScore` under ``ties`` ("expected" or "range"); ``today``: its
    Score in trec_eval's order (kept as the value under range)."""
    from rpdi.metrics.ties import expected, span

    out = []
    for m, score in zip(measures, today):
        if ties == "expected":
            e = expected(rankings, m, compat, integer_rankings)
            out.append(TieScore(ties, e.score, e.path, stderr=e.stderr))
        else:
            low, high, path = span(rankings, m, compat, integer_rankings)
            out.append(TieScore(ties, score, path, low=low.value, high=high.value))
    return out


def check_average(ties: str, average: str) -> None:
    """A micro average over tie orders is refused (see the module's docstring)."""
    if ties != "trec_eval" and average == "micro":
        raise InputError(f"average micro: not given with ties {ties} (the ratio of expected pooled sums is not "
                         f"the expected ratio); use the macro average")


def tie_fields(tie: TieScore | None, s: int, t: int | None, present: np.ndarray, average: str,
               undefined: str) -> dict:
    """The fields ``tie`` adds to run s's record of topic t (None: over its ``present`` topics,
    aggregated by ``average``: mean, sum or geometric); nothing without ties."""
    if tie is None:
        return {}
    from rpdi.metrics.evaluate import _aggregate
    from rpdi.metrics.ties import paths_text

    if t is None:
        fields = {"ties": paths_text(tie.path[s][present])}
    else:
        fields = {"ties": tie.path[s, t]}
    if tie.how == "expected":
        se = tie.stderr[s]
        if t is not None:
            fields["stderr"] = float(se[t])
        else:
            total = float(np.sqrt((se[present] ** 2).sum()))
            n = max(int(present.sum()), 1)  # a geometric mean's error is not propagated
            fields["stderr"] = {"sum": total, "mean": total / n}.get(average)
        return fields
    for key, x in (("low", tie.low), ("high", tie.high)):
        value = x[s, t] if t is not None else _aggregate(x[s:s + 1], present[None], average, undefined)[0]
        value = float(value)
        fields[key] = (0.0 if undefined == "zero" else None) if np.isnan(value) else value
    return fields
