"""Browsing models: every metric as an explicit stochastic user, and its exact expectations.

``model_for("RBP(p=0.8)")`` gives the browsing model behind a measure name (the same name
``rpdi eval`` takes); ``exact(model, rankings)`` its exact expectations; ``evaluate`` and
``score`` take any model as a measure (:mod:`usermodels.scoring`).
"""

from rpdi.choices import CONVENTIONS
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.measures.diversity_ia import intent_aware_base
from rpdi.metrics.names import parse_measure
from rpdi.metrics.errors import InputError
from rpdi.usermodels.ap import RobertsonAP
from rpdi.usermodels.base import At, Branch, BrowsingModel, geometric
from rpdi.usermodels.bpm import BPM, BPMDynamic
from rpdi.usermodels.cautious_rr import CautiousRR
from rpdi.usermodels.cwl import INSQ, INST, NERR8, NERR9, NERR10, NERR11
from rpdi.usermodels.err import ERR
from rpdi.usermodels.escg import ExpectedSessionCG
from rpdi.usermodels.esdcg import ExpectedSessionDCG, ExpectedSessionNDCG
from rpdi.usermodels.exact import AGGREGATIONS, ExactValue, Expectations, exact
from rpdi.usermodels.hit import HIT, Success
from rpdi.usermodels.intents import NDEVAL_USERS, IntentAware
from rpdi.usermodels.ift import IFTGoal, IFTGoalRate, IFTRate
from rpdi.usermodels.logdiscount import DCG, NDCG, SDCG
from rpdi.usermodels.novelty import NNRBP, NRBP, AlphaDCG, AlphaNDCG
from rpdi.usermodels.npv import NPV
from rpdi.usermodels.nsdcg import NormalisedSessionDCG
from rpdi.usermodels.plugin import is_plugin, load_plugin
from rpdi.usermodels.population import BetaRBP
from rpdi.usermodels.precision import Precision
from rpdi.usermodels.rbp import RBP
from rpdi.usermodels.rbp2 import RBP2
from rpdi.usermodels.rr import ReciprocalRank
from rpdi.usermodels.rr2 import RR2
from rpdi.usermodels.scoring import evaluate, measure_list, resolve, score
from rpdi.usermodels.sdcg import SessionDCG
from rpdi.usermodels.srbp import SessionRBP
from rpdi.usermodels.set_measure import SET
from rpdi.usermodels.tbg import TBG
from rpdi.usermodels.umeasure import UMeasure

MODELS: dict[str, type[BrowsingModel]] = {cls.measure_name: cls for cls in [
    Precision, ReciprocalRank, RobertsonAP, RBP, ERR, SDCG, DCG, NDCG, HIT, Success, RR2,
    CautiousRR, RBP2, INST, INSQ, NERR8, NERR9, NERR10, NERR11, TBG, BetaRBP, BPM, BPMDynamic,
    IFTGoal, IFTRate, IFTGoalRate, UMeasure, NPV, SET,
]}
# the users of ndeval's diversity measures, which read the subtopics of diversity qrels
DIVERSITY_MODELS: dict[str, type[BrowsingModel]] = {cls.measure_name: cls for cls in [AlphaDCG, AlphaNDCG, NRBP, NNRBP]}
# the users of the session measures, which read a session's turns end to end (metrics.sessions)
SESSION_MODELS: dict[str, type[BrowsingModel]] = {cls.measure_name: cls for cls in [SessionDCG, SessionRBP, NormalisedSessionDCG,
                                                                                   ExpectedSessionCG, ExpectedSessionDCG,
                                                                                   ExpectedSessionNDCG]}


def model_for(measure, base: str | None = None) -> BrowsingModel:
    """The browsing model behind a measure: a name (``RBP(p=0.8)``, the same name ``rpdi eval``
    takes), a model of one's own named by file or module (``path.py:Class(...)@k``, a file
    relative to ``base`` first: see :mod:`usermodels.plugin`), a :class:`Measure`, or a
    BrowsingModel class or instance; InputError if the measure has no browsing model."""
    if isinstance(measure, BrowsingModel):
        return measure
    if isinstance(measure, type) and issubclass(measure, BrowsingModel):
        return measure()
    if isinstance(measure, str) and is_plugin(measure):
        return load_plugin(measure, base)
    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    base = intent_aware_base(m)
    if base is not None:  # X-IA: X's user, having drawn an intent
        return IntentAware(model_for(base), m)
    if m.spec.name in NDEVAL_USERS:
        return NDEVAL_USERS[m.spec.name](m)
    if m.params.get("judged_only"):
        raise InputError(f"measure {m.text!r}: judged_only reads another ranking than the user's; "
                         f"it can be evaluated (rpdi eval) but not simulated")
    if isinstance(m.spec.compute, ExactValue):  # declared by its model
        return m.spec.compute.model_class(m)
    cls = MODELS.get(m.spec.name) or DIVERSITY_MODELS.get(m.spec.name) or SESSION_MODELS.get(m.spec.name)
    if cls is None:
        raise InputError(f"measure {m.text!r}: {m.spec.name} has no browsing model; it can be "
                         f"evaluated (rpdi eval) but not simulated (see `rpdi models`)")
    return cls(m)


__all__ = ["MODELS", "DIVERSITY_MODELS", "SESSION_MODELS", "model_for", "evaluate", "score", "resolve", "measure_list", "exact", "Expectations", "AGGREGATIONS",
           "CONVENTIONS", "BrowsingModel", "Branch", "At", "geometric"]
