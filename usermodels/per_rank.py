"""The C/W/L view of a browsing model on one ranking, by probability propagation.

Moffat, Bailey, Scholer & Thomas (2017) describe a metric by three functions of the rank i:
C(i), the probability that a user who read rank i reads on to i + 1; W(i), the weight the
metric gives the gain at rank i; L(i), the probability that the user stops at rank i. From the
exact evaluator (:func:`usermodels.exact.exact`) come V(i), the probability that rank i is read,
and L(i); then C(i) = V(i + 1)/V(i), E[N] = sum_i i L(i), and the weight the model's aggregation
gives a unit of gain read at rank i:

    rate       E[G]/E[N]:  W(i) = V(i)/E[N]
    mean_rate  E[G/N]:     W(i) = sum_{j >= i} L(j)/j
    total      E[G]:       W(i) = V(i)

(divided by the same expectation on the ideal ranking for a normalised model, as nDCG). When
the user accrues each document's gain as it reads it, the value is sum_i W(i) g(i); a user who
accrues something else (ERR's gain 1 on being satisfied, BetaRBP's (1 - p) g) has its own value.
A user whose start state is drawn (AP's target) has C, W and L averaged over that draw.
Whatever the aggregation, the view also gives cwl_eval's three numbers, each with its residual
(the same with unjudged documents and the tail at their best, less it): EU = E[G]/E[N], the
expected rate of gain; ETU = E[G], the expected total gain; ED = E[N], the expected depth.

Example: RBP(p=0.8) has C(i) = 0.8, V(i) = 0.8^(i-1), E[N] = 5 and W(i) = 0.2 x 0.8^(i-1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpdi.metrics.rankings import Rankings
from rpdi.metrics.view import View
from rpdi.usermodels.base import BrowsingModel
from rpdi.usermodels.exact import exact
from rpdi.usermodels.mixture import Mixture


@dataclass(frozen=True)
class PerRank:
    """Per rank 1..depth: ``gain`` (the model's gain of the document there, 0 past the ranking),
    ``reach`` V(i), ``C``, ``W`` and ``L`` (NaN where undefined: C past the last rank read, W
    for an aggregation that weighs no gain); ``expected_depth`` E[N] (inf if some users never
    stop), ``never`` the probability of that, ``value`` and ``upper`` the exact expectation and
    the upper end of its interval (unjudged documents and what lies beyond the ranking at their
    best), ``weighted`` the sum of W(i) g(i) over all ranks (the value when the user accrues each
    document's gain as read), ``start_states`` the number of start states a user is drawn from;
    ``cwl`` C/W/L's expected rate of gain, total gain and depth (keys ``rate``, ``total``,
    ``depth``: cwl_eval's EU, ETU and ED), each as (value, residual)."""

    gain: np.ndarray
    reach: np.ndarray
    C: np.ndarray
    W: np.ndarray
    L: np.ndarray
    expected_depth: float
    never: float
    value: float
    upper: float
    weighted: float
    start_states: int
    cwl: dict[str, tuple[float, float]]


def per_rank(model: BrowsingModel, rankings: Rankings, depth: int, convention: str = "unknown") -> PerRank:
    """The C/W/L view of ``model`` on the one ranking of ``rankings``, ranks 1..``depth``
    (the expectations themselves count every rank, up to the model's horizon)."""
    ex = exact(model, rankings, convention)
    view = View(rankings, model.k)
    read = view.length[0, 0]
    n = max(depth, ex.stop.shape[-1], int(read))  # every rank any user reads, and the table's
    reach = _padded(ex.reach[0, 0], n + 1)
    L = _padded(ex.stop[0, 0], n)
    gain = _gain(model, rankings, ex, read, n)
    expected_depth = float(ex.values["depth"][0, 0])
    V = reach[:n]
    with np.errstate(invalid="ignore", divide="ignore"):
        C = np.where(V > 0, reach[1:] / np.where(V > 0, V, 1), np.nan)
        after = np.cumsum((L / np.arange(1, n + 1))[::-1])[::-1]  # sum over j >= i of L(j)/j
        W = {"rate": V / expected_depth, "mean_rate": after, "total": V}.get(model.aggregation, np.full(n, np.nan))
        ideal = _ideal(ex)
        if ideal is not None:
            W = W / ideal
    start = model.initial(view)[0, 0]
    if not start.any():  # undefined on this ranking (AP with no relevant document): no weights
        W = np.full(n, np.nan)
    return PerRank(gain[:depth], V[:depth], C[:depth], W[:depth], L[:depth], expected_depth,
                   float(ex.never[0, 0]), float(ex.value[0, 0]), float(ex.upper[model.aggregation][0, 0]),
                   float((W * gain).sum()), int((start > 0).sum()),
                   {key: (float(ex.values[key][0, 0]), _residual(ex.values[key][0, 0], ex.upper[key][0, 0]))
                    for key in CWL_NUMBERS})


CWL_NUMBERS = ("rate", "total", "depth")  # cwl_eval's EU, ETU and ED


def _gain(model, rankings, ex, read: int, n: int) -> np.ndarray:
    """The model's gain at each rank; a mixture's (X-IA's) is the variants' (intents') gains
    weighted by their probabilities, sum_v p_v g_v(i)."""
    if not isinstance(model, Mixture):
        view = View(rankings, model.k)
        return _padded(model.gains(view.grade, view)[0, 0][:read], n)
    variants, _ = model.variants(rankings)
    views = [View(r, model.k) for r in variants]
    return sum(p * _padded(model.inner.gains(v.grade, v)[0, 0][:read], n) for p, v in zip(ex.shares[0, 0], views))


def _ideal(ex) -> float | None:
    """What the weights are divided by: the ideal value of a normalised model; a mixture's, when
    every variant has the same (ERR-IA's ranking relevant at every rank), else NaN (each intent
    is normalised by its own ideal: no one weight per rank); None: not normalised."""
    if ex.ideal is not None or not ex.parts:
        return None if ex.ideal is None else ex.ideal[0]
    ideals = [x.ideal[0] for x, p in zip(ex.parts, ex.shares[0, 0]) if p > 0 and x.ideal is not None]
    if not ideals:
        return None
    return ideals[0] if np.allclose(ideals, ideals[0], rtol=1e-12) else np.nan


def _residual(value: float, upper: float) -> float:
    """upper - value; NaN where both are infinite (a user who never stops either way)."""
    return float("nan") if np.isinf(value) and upper == value else float(upper - value)


def _padded(values: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` entries, zeros past the end."""
    out = np.zeros(n)
    out[:min(n, values.size)] = values[:n]
    return out
