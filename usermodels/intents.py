"""X-IA: any single-intent user who first draws an intent (Agrawal, Gollapudi, Halverson & Ieong,
WSDM 2009).

A query has intents i (the subtopics of diversity qrels) with probabilities P(i|q) (a file's, or
uniform over the subtopics with a relevant document). The intent-aware user of a browsing model
X draws i ~ P(i|q) at the start, then is X's user reading the ranking with intent i's grades:
a :class:`usermodels.mixture.Mixture` whose variants are the intents. Its expectation is
sum_i P(i|q) X_i, X_i the exact expectation of X's user on intent i's grades, which is X-IA's
closed form for every X (ERR-IA, P-IA, MAP-IA from AP, RBP-IA, INST-IA, a model of one's own).
Where X's aggregation is a rate (E[G]/E[N]: P, RBP, INST, ...), the value is the mean over
intents of each intent's rate, not the mixed population's E[G]/E[N] (see
:mod:`usermodels.mixture`).

>>> import numpy as np
>>> from rpdi.metrics.diversity import DiversityQrels, diversity_rankings
>>> from rpdi.metrics.trec import run_from_dict
>>> from rpdi.usermodels import exact, model_for
>>> q = DiversityQrels(["1", "1"], ["a", "b"], ["d1", "d2"], np.array([1.0, 1.0]))
>>> r = diversity_rankings(q, [run_from_dict("r", {"1": {"d1": 3.0, "x": 2.0, "d2": 1.0}})])
>>> float(exact(model_for("RR-IA"), r).value[0, 0])  # intent a finds d1 at 1, b d2 at 3: (1 + 1/3)/2
0.6666666666666666
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rpdi.metrics.measures.registry import IA_SUFFIX, Measure, intent_aware_spec
from rpdi.metrics.rankings import Rankings
from rpdi.usermodels.mixture import Mixture
from rpdi.usermodels.err import ERR
from rpdi.metrics.view import View
from rpdi.usermodels.novelty import GREEDY, GivenGains, intents_of


class IntentAware(Mixture):
    """Draws an intent i with probability P(i|q), then reads as ``inner``'s user with intent i's
    grades. ``IntentAware(model_for("RBP(p=0.8)"))`` is RBP-IA(p=0.8)'s user.

    An inner model's declared difference from its closed form is mixed per intent as
    :class:`usermodels.mixture.Mixture` says.
    """

    drawn = "an intent i with probability P(i|q)"
    per = "intent"

    def __init__(self, inner, measure=None):
        super().__init__(inner, measure if measure is not None else intent_aware_measure(inner.measure))

    def variants(self, rankings: Rankings) -> tuple[list[Rankings], np.ndarray]:
        """One variant per intent slot i: every topic's i-th subtopic's grades (a topic with fewer
        subtopics has weight 0 there); the weights P(i|q), (1, T, I)."""
        intents = intents_of(rankings, self.measure.text)
        per = intents.per_intent(rankings)
        T, I = len(rankings.topics), intents.I
        variants = [_topics(per, np.arange(T) * I + i) for i in range(I)]
        return variants, intents.probabilities(self.inner.measure.params.get("rel"))[None]


def _topics(rankings: Rankings, index: np.ndarray) -> Rankings:
    """The rankings of the topics ``index`` only, in that order."""
    pick = lambda a: None if a is None else a[:, index]  # noqa: E731
    return replace(rankings, topics=rankings.topics[index], grade=pick(rankings.grade), judged=pick(rankings.judged),
                   doc=pick(rankings.doc), length=pick(rankings.length), present=pick(rankings.present),
                   ideal=rankings.ideal[index], n_judged=rankings.n_judged[index], words=pick(rankings.words),
                   pooled=pick(rankings.pooled))


def intent_aware_measure(measure: Measure) -> Measure:
    """The measure ``X-IA`` of a measure X, with X's parameters and cutoff (a model of one's own's
    too: ``two_strikes.py:TwoStrikes-IA(n=2)``).

    >>> from rpdi.metrics.names import parse_measure
    >>> intent_aware_measure(parse_measure("RBP(p=0.9)@10")).text
    'RBP-IA(p=0.9)@10'
    """
    name = measure.spec.name
    head, sep, tail = measure.text.partition(name)
    text = head + name + IA_SUFFIX + tail if sep else measure.text + IA_SUFFIX
    spec = intent_aware_spec(name + IA_SUFFIX, {name: measure.spec})
    return Measure(text, spec, dict(measure.params), measure.cutoff, measure.integer_grades)


class NdevalCascade(ERR):
    """ERR's cascade user as ndeval scores ERR-IA: satisfied, and stopping, with probability alpha
    at each document relevant (grade >= rel) to its intent, else reading on, up to rank k; E[G/N]
    = sum_r alpha (1 - alpha)^c_r b_r / r, divided by the same on a ranking relevant at every
    rank (ndeval's "collection independent" normalisation; alpha cancels)."""

    measure_name = "ERR-IA"
    normalised = True
    oracle = None

    def gains(self, grade, view):
        if isinstance(view.rankings, GivenGains):
            return grade
        return self.alpha * (grade >= self.rel)

    def ideal_rankings(self, rankings):
        T, k = len(rankings.topics), self.k or rankings.depth
        return GivenGains.of_grades(np.full((1, T, k), self.alpha), np.zeros((T, 1)), np.zeros(T, np.int64), 1.0,
                                    runs=("ideal",), topics=rankings.topics)


class WholeCascade(NdevalCascade):
    """ERR-IA's cascade user, not normalised per intent: nERR-IA's mixture is normalised as a whole."""

    normalised = False


class GreedyIntentAware(IntentAware):
    """nERR-IA's user: ERR-IA's (draws an intent, then the alpha-cascade), divided by the same
    user's value on ndeval's greedy ideal ranking, one ranking for every intent (the declared
    greedy ideal: :data:`usermodels.novelty.GREEDY`)."""

    declared = GREEDY

    def ideal_variants(self, rankings: Rankings) -> list[Rankings]:
        from rpdi.metrics.measures.diversity import greedy_ideal

        b = greedy_ideal(View(rankings), self.rel, self.alpha)  # (T, L, I) the ideal's relevance per intent
        T, L, _ = b.shape
        return [Rankings.of_grades(b[None, :, :, i], np.zeros((T, 1)), np.zeros(T, np.int64), 1.0, runs=("ideal",),
                                   topics=rankings.topics) for i in range(b.shape[2])]


def _inner(name: str):
    """An ndeval intent-aware measure's user: the intent-aware user of ``name`` formatted with the
    measure's ``rel`` and cutoff (P-IA@k: P(rel=..)@k's, MAP-IA: AP(rel=..)'s)."""
    def user(measure: Measure) -> IntentAware:
        from rpdi.metrics.names import parse_measure
        from rpdi.usermodels import model_for

        cutoff = "" if measure.cutoff is None else f"@{measure.cutoff}"
        return IntentAware(model_for(parse_measure(f"{name}(rel={measure.params['rel']!r}){cutoff}")), measure)
    return user


# ndeval's intent-aware measures, declared by metrics under their own names: their users
NDEVAL_USERS = {"P-IA": _inner("P"), "MAP-IA": _inner("AP"), "strec": _inner("Success"),
                "ERR-IA": lambda measure: IntentAware(NdevalCascade(measure), measure),
                "nERR-IA": lambda measure: GreedyIntentAware(WholeCascade(measure), measure)}
