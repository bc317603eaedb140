"""Users who first draw which version of the ranking they meet: a mixture of gain variants.

The mechanism's contract. A *variant* of a collection is the same runs' rankings read with other
grades (one intent's judgments; later, one order of tied documents): a
:class:`metrics.rankings.Rankings` with the same runs, topics and depth. A :class:`Mixture` gives,
for a collection, its variants v = 1..V and their weights w_v >= 0 per (run, topic)
(:meth:`Mixture.variants`). Its user draws a variant with probability proportional to w_v,
once, at the start, and is then the ``inner`` model's user on that variant. V is the mixture's
own, whatever the collection (a variant that does not apply has weight 0): ``simulate`` values
a batch of runs at a time, and refuses a mixture whose number of variants differs between
batches. So:

* exact (:func:`usermodels.exact.exact`): every expectation is the weighted mean of the inner
  model's on each variant, sum_v p_v E_v[.], with p_v = w_v / sum_u w_u (:meth:`Mixture.shares`;
  all weights 0: undefined). A variant on which the inner user is undefined (AP's with nothing
  relevant) counts 0: its users read nothing and gain nothing (as X-IA's closed form counts an
  undefined X_i). Normalised inner models (nDCG) are normalised per variant, by the variant's
  own ideal ranking;
* per-user variance: sum_v p_v (Var_v + (E_v - E)^2) for each aggregation, the variance of one
  user's (linearised) outcome when its variant is drawn at random;
* a mixture may also be normalised as a whole (:meth:`Mixture.ideal_variants`: nERR-IA divides
  by the mixture's value on the greedy ideal ranking): every value, and each user's outcome, is
  then divided by that one number per topic;
* simulation (:mod:`simulate.batch`): each user of a block draws its variant with one uniform
  from the block's stream, then the users of variant v are simulated on a stream of their own
  keyed by (task, block, v): a ranking's sessions do not depend on how blocks are batched. The
  estimate is sum_v (n_v / n) est_v over the n_v users who drew v (the realised shares, not the
  weights: a simulation does not trust the weights the exact value uses);
* the verdict: closed form vs exact as for any model, and per variant the simulated users'
  deviations from that variant's exact value, pooled over the users (:mod:`simulate.sample`).

Rate aggregations (E[G]/E[N]) are where a mixture must say which value it means. The value here
is sum_v p_v E_v[G]/E_v[N], the mean over variants of each variant's rate: that is what
X-IA's closed form is (Agrawal et al. 2009: the P(i|q)-weighted mean of X over intents), and
``test_mixture`` checks it. The mixed population's own rate, sum_v p_v E_v[G] / sum_v p_v E_v[N],
is another number wherever the variants' users read to different depths on average (INST, BPM,
IFT: users who stop on what they find); for users whose stopping ignores the gains (P@k, RBP,
SDCG) E_v[N] is the same for every variant and the two agree. For ``total`` and ``mean_rate`` the
two readings are one (a mean of per-user outcomes is linear in the mixture).

Example: a user who meets ``$-`` or ``-$`` with weights 1 and 3 is RR's user with RR = 1 or 1/2:

>>> from rpdi.metrics.evaluate import rankings_from_grades
>>> from rpdi.usermodels import exact, model_for
>>> from rpdi.usermodels.mixture import Mixture  # the package's own class, which exact() knows
>>> class Either(Mixture):
...     def variants(self, rankings):
...         return [rankings_from_grades("$-"), rankings_from_grades("-$")], np.array([1.0, 3.0])
>>> rr = model_for("RR")
>>> float(exact(Either(rr, rr.measure), rankings_from_grades("$-")).value[0, 0])  # (1 x 1 + 3 x 1/2)/4
0.625
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.rankings import Rankings
from rpdi.usermodels.base import BrowsingModel, Declared


class Mixture(BrowsingModel):
    """A user who draws a variant of the ranking, then reads it as ``inner``'s user.

    Subclasses give :meth:`variants`. The aggregation, cutoff and horizon are the inner
    model's; the value is not normalised again (each variant is, if the inner model is).

    An inner model's declared difference from its closed form is mixed as the values are: the
    expected exact value is sum_v p_v d_v, d_v the inner model's expected value on variant v
    given the closed form. That is right where d_v is the variant's closed form plus what the
    inner declaration adds on it (U's start-versus-end weights), or an exact formula of its own
    (TBG's random reading times), or a factor of the depth alone (RBP's horizon): the
    declarations rpdi has."""

    normalised = False

    def __init__(self, inner: BrowsingModel, measure):
        super().__init__(measure)
        self.inner = inner
        self.k = inner.k
        self.aggregation = inner.aggregation
        self.horizon = inner.horizon
        self.halflife = inner.halflife
        self.rule, self.citation = self.measure.spec.user_model, self.measure.spec.citation
        if inner.declared is not None:
            d = inner.declared
            self.declared = Declared(d.why, f"per {self.per}, {d.relation}", lambda closed, model, ranking: sum(
                p * d.expected(closed, inner, r) for p, r, ok in zip(ranking.shares, ranking.variants, ranking.defined)
                if ok and p > 0))

    drawn = "a variant of the ranking"  # what the user draws first, in words
    per = "variant"  # one variant, in a word

    def variants(self, rankings: Rankings) -> tuple[list[Rankings], np.ndarray]:
        """The collection's variants and their weights, broadcastable to (S, T, V)."""
        raise NotImplementedError

    def ideal_variants(self, rankings: Rankings) -> list[Rankings] | None:
        """The variants of one ideal ranking per topic (a Rankings of one run each, in the order
        of :meth:`variants`) that the whole mixture's value is divided by (its value there, with
        the same shares); None (default): not normalised as a whole."""
        return None

    def shares(self, weights: np.ndarray, shape: tuple) -> np.ndarray:
        """(S, T, V) = ``shape`` probabilities of the variants: the weights divided by their sum
        (0 where all are 0: the mixture is undefined there)."""
        w = np.broadcast_to(weights, shape)
        total = w.sum(-1, keepdims=True)
        return np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)

    def step(self, state, at):
        raise TypeError(f"{type(self).__name__}: a mixture steps through its inner model, per variant")
