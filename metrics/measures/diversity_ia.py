"""X-IA for any declared measure X: X's user, having first drawn an intent (Agrawal et al. 2009).

A name ``X-IA`` (``RBP-IA(p=0.8)@10``, ``nDCG-IA@10``, ``INST-IA(T=3)``) is parsed by
:func:`~metrics.measures.registry.intent_aware_spec` for every declared X that declares no
``X-IA`` of its own (ndeval's ERR-IA, P-IA and MAP-IA are declared in
:mod:`metrics.measures.diversity`; P-IA and MAP-IA equal the generic form of P and AP, ERR-IA is
ndeval's normalised ERR). The rankings must come with their subtopics
(:class:`~metrics.diversity.DiversityRankings`).
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import Measure, MeasureSpec
from rpdi.metrics.view import Score, View


def intent_aware(v: View, base: MeasureSpec, cutoff=None, level=None, **params) -> Score:
    """X-IA = sum_i P(i|q) X_i, X_i the measure X on the ranking read with intent i's grades.

    User: draws an intent i with probability P(i|q) (a file's, or uniform over the subtopics
    with a relevant document: grade >= X's ``rel`` if X has one, else > 0), then is X's user
    with intent i's grades as the relevance. X_i is computed on intent i's grades with the
    topic's judged documents (each judged for every intent) as X's ideal; an X_i that is
    undefined (X divides by the intent's relevant documents and it has none) counts 0; the
    topic's value is undefined when it has no intent (no subtopic with a relevant document).
    The residual (X's, if any) is mixed likewise. Reference: Agrawal, Gollapudi, Halverson &
    Ieong (WSDM 2009), intent-aware measures.

    >>> from rpdi.metrics.diversity import DiversityQrels, diversity_rankings
    >>> from rpdi.metrics.trec import run_from_dict
    >>> from rpdi.metrics.names import parse_measure
    >>> q = DiversityQrels(["1"] * 3, ["a", "b", "b"], ["d1", "d2", "d3"], np.array([1.0, 1.0, 1.0]))
    >>> r = diversity_rankings(q, [run_from_dict("r", {"1": {"d1": 3, "d2": 2, "x": 1}})])
    >>> m = parse_measure("P-IA@2")          # ndeval's P-IA: the mean of P@2 over the two intents
    >>> float(m.compute(View(r, m.depth)).value[0, 0]), (1/2 + 1/2) / 2
    (0.5, 0.5)
    >>> m = parse_measure("RR-IA")           # intent a finds d1 at 1, intent b d2 at 2
    >>> float(m.compute(View(r, m.depth)).value[0, 0]), (1 + 1/2) / 2
    (0.75, 0.75)
    """
    from rpdi.metrics.diversity import DiversityRankings

    rankings = v.rankings
    name = f"{base.name}-IA"
    if not isinstance(rankings, DiversityRankings):
        raise InputError(f"measure {name!r}: needs diversity qrels (topic subtopic docno judgment lines)")
    measure = Measure(name, base, params, level if base.cutoff_kind is float else cutoff)
    intents = rankings.intents
    S, T = rankings.length.shape
    per_intent = View(intents.per_intent(rankings), measure.depth, v.compat)
    score = measure.compute(per_intent)
    prob = intents.probabilities(params.get("rel"))  # (T, I)
    return Score(_mix(score.value, prob, S, T),
                 residual=None if score.residual is None else _mix(score.residual, prob, S, T))


def _mix(values: np.ndarray, prob: np.ndarray, S: int, T: int) -> np.ndarray:
    """(S, T) sum_i P(i|q) x_i of per-intent values (S, T * I); an undefined x_i counts 0, a topic
    without intents is undefined."""
    x = np.nan_to_num(values.reshape(S, T, -1))
    mixed = (x * prob[None]).sum(axis=-1)
    return np.where(prob.sum(axis=-1)[None] > 0, mixed, np.nan)


def intent_aware_base(measure: Measure) -> Measure | None:
    """The measure X of an ``X-IA`` measure (its parameters and cutoff), None for any other."""
    base = measure.spec.extra.get("base")
    if base is None or measure.spec.compute not in (intent_aware, None) or not measure.spec.intents:
        return None
    text = measure.text.split("(")[0].split("@")[0].strip()
    text = text[:-3] + measure.text.strip()[len(text):]
    return Measure(text, base, dict(measure.params), measure.cutoff, measure.integer_grades)
