"""Users who read each group of tied documents in a random order: a mixture of tie orders.

trec_eval reads documents with equal scores in docno order (descending); a user who meets a
tie group reads it in an order of its own. :class:`TieOrders` is any browsing model X's user
(a model of one's own too) who draws, at the start, one order of every tie group of the
ranking, uniformly, and then reads the ranking so ordered as X's user: a
:class:`usermodels.mixture.Mixture` whose variants are the orders. Its exact expectation is
the mean over orders of X's exact expectation on each, the same number as
:func:`metrics.ties.expected` of X's measure (its closed form where McSherry & Najork's or the
linear path gives one), and its simulated users each draw an order, which the verdict compares
with the exact value like any other mixture's.

Which orders are the variants (:func:`metrics.ties.reorderings`, the same as the core's):

- a ranking with at most :data:`metrics.ties.ENUMERATION_LIMIT` distinct orders of its tie
  groups (documents alike in grade, judgment, pool status and length are interchangeable): one
  variant per distinct order, equally likely: the exact value is the exact expectation over
  uniformly random orders;
- a ranking with more: the :data:`metrics.ties.SAMPLES` orders drawn from ``seeds.stream(seed,
  run, topic, "ties")``, one fixed sample, equally likely: the exact value is then the exact
  expectation over THAT SAMPLE of orders (what the core's "sampling" path gives too, with its
  standard error against the expectation over all orders); the simulated users draw from the
  same sample, so the verdict compares like with like;
- a ranking whose measure reads no tie: one variant, the ranking as trec_eval orders it.

Every variant holds the whole collection's rankings, so a collection needs (orders x runs x
topics x ranks) cells; more than :data:`ORDER_CELLS` is refused in one line (use ``rpdi eval
--ties expected``, which evaluates ranking by ranking).

Expectation over users and expectation over orders. For a ``rate`` aggregation (E[G]/E[N]:
P, RBP, INST, ...) the mixture's value is the mean over orders of each order's rate, sum_v p_v
E_v[G]/E_v[N] (as X-IA's, :mod:`usermodels.mixture`), which is what the closed form's
expectation over orders is. The rate of the whole population of users whose orders are random
is another number, sum_v p_v E_v[G] / sum_v p_v E_v[N] (:func:`population_rate`), wherever the
orders change how deep the users read on average: INST's users, who stop once they have found
what they came for, read less when a relevant tied document comes first. For RBP's users (whose
stopping ignores the gains) E_v[N] is the same for every order and the two coincide. ``rpdi
simulate --ties expected`` prints both for the rate measures where they differ.

>>> from rpdi.metrics.trec import qrels_from_dict, run_from_dict
>>> from rpdi.metrics.rankings import build_rankings
>>> from rpdi.usermodels import exact, model_for
>>> r = build_rankings(qrels_from_dict({"q": {"a": 1}}), [run_from_dict("s", {"q": {"a": 1.0, "b": 1.0}})])
>>> float(exact(TieOrders(model_for("RR")), r).value[0, 0])  # a first or second: (1 + 1/2) / 2
0.75
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.rankings import Rankings
from rpdi.usermodels.mixture import Mixture

ORDER_CELLS = 50_000_000  # (orders x runs x topics x ranks) that the variants may hold


class TieOrders(Mixture):
    """Draws an order of every tie group uniformly at random, then reads as ``inner``'s user.
    ``TieOrders(model_for("INST"))`` is INST's user who meets tied documents in random order;
    its measure (same name) is the expectation over the orders of ``inner``'s
    (:func:`metrics.ties.expected`); ``seed`` chooses the orders of rankings with too many."""

    drawn = "an order of every group of tied documents, uniformly at random"
    per = "order"

    def __init__(self, inner, seed: int = 0):
        super().__init__(inner, tie_measure(inner.measure, seed))
        self.seed = seed

    def variants(self, rankings: Rankings) -> tuple[list[Rankings], np.ndarray]:
        """One variant per order (see the module's docstring), weights 1 (0 where a ranking has
        fewer orders than the collection's most), (S, T, V)."""
        from rpdi.metrics.ties import reorder, reorderings

        S, T, D = rankings.grade.shape
        orders = {key: perm for key, perm, _ in reorderings(rankings, self.inner.measure, self.seed)}
        V = max((len(p) for p in orders.values()), default=1)
        if V * S * T * D > ORDER_CELLS:
            raise InputError(f"measure {self.measure.text!r}: {V} orders of tied documents x {S} runs x {T} topics "
                             f"x {D} ranks is too many to simulate; rpdi eval --ties expected gives the expectation")
        perm = np.broadcast_to(np.arange(D), (V, S, T, D)).copy()
        weights = np.zeros((S, T, V))
        weights[..., 0] = 1.0
        for (s, t), p in orders.items():
            perm[:len(p), s, t] = p
            weights[s, t, :len(p)] = 1.0
        return [reorder(rankings, perm[v]) for v in range(V)], weights


def tie_measure(measure: Measure, seed: int = 0) -> Measure:
    """``measure`` valued by its expectation over the orders of tied documents: its closed form
    (or exact value) is :func:`metrics.ties.expected`'s."""
    from rpdi.metrics.ties import expected

    def over_orders(view, **_):
        return expected(view.rankings, measure, view.compat, seed=seed).score

    spec = replace(measure.spec, compute=over_orders, extra={}, passes_cutoff=False,
                   user_model=f"{measure.spec.user_model} (each tie group read in a random order)")
    return replace(measure, spec=spec)


def population_rate(expectations) -> np.ndarray:
    """(S, T) the rate of the whole population of a mixture's users, sum_v p_v E_v[G] / sum_v p_v
    E_v[N], from its :class:`usermodels.exact.Expectations` (a variant where the inner user is
    undefined counts 0, as in the mixture's value); NaN where no user reads anything."""
    p = expectations.shares
    zero = lambda a: np.where(np.isnan(a), 0.0, a)  # noqa: E731  (an infinite depth stays infinite)
    gain = np.stack([zero(x.values["total"]) for x in expectations.parts], -1)
    depth = np.stack([zero(x.values["depth"]) for x in expectations.parts], -1)
    num, den = (p * gain).sum(-1), (p * depth).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)

