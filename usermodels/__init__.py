"""Browsing models: every metric as an explicit stochastic user, and its exact expectations.

``model_for("RBP(p=0.8)")`` gives the browsing model behind a measure name (the same name
``rpdi eval`` takes); ``exact(model, rankings)`` its exact expectations.
"""

from metrics.measures import Measure, parse_measure
from metrics.trec import InputError
from usermodels.ap import RobertsonAP
from usermodels.base import At, Branch, BrowsingModel, geometric
from usermodels.cautious_rr import CautiousRR
from usermodels.cwl import INSQ, INST, NERR8, NERR9, NERR10, NERR11
from usermodels.err import ERR
from usermodels.exact import AGGREGATIONS, CONVENTIONS, Expectations, exact
from usermodels.hit import HIT, Success
from usermodels.logdiscount import DCG, NDCG, SDCG
from usermodels.plugin import is_plugin, load_plugin
from usermodels.population import BetaRBP
from usermodels.precision import Precision
from usermodels.rbp import RBP
from usermodels.rbp2 import RBP2
from usermodels.rr import ReciprocalRank
from usermodels.rr2 import RR2
from usermodels.tbg import TBG

MODELS: dict[str, type[BrowsingModel]] = {cls.measure_name: cls for cls in [
    Precision, ReciprocalRank, RobertsonAP, RBP, ERR, SDCG, DCG, NDCG, HIT, Success, RR2,
    CautiousRR, RBP2, INST, INSQ, NERR8, NERR9, NERR10, NERR11, TBG, BetaRBP,
]}


def model_for(measure: str | Measure) -> BrowsingModel:
    """The browsing model behind a measure name (or ``path.py:Class(...)@k``, a model of one's
    own: see :mod:`usermodels.plugin`); InputError if the measure has none."""
    if isinstance(measure, str) and is_plugin(measure):
        return load_plugin(measure)
    m = parse_measure(measure) if isinstance(measure, str) else measure
    cls = MODELS.get(m.spec.name)
    if cls is None:
        raise InputError(f"measure {m.text!r}: {m.spec.name} has no browsing model; it can be "
                         f"evaluated (rpdi eval) but not simulated (see `rpdi models`)")
    return cls(m)


__all__ = ["MODELS", "model_for", "exact", "Expectations", "AGGREGATIONS", "CONVENTIONS",
           "BrowsingModel", "Branch", "At", "geometric"]
