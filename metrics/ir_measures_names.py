"""ir_measures' names in rpdi: the aliases its users type, its ``Measure`` objects, and the one
list of the measures of ir_measures 0.4.3's registry whose rpdi number differs from
ir_measures' somewhere, each with where and why (:data:`DIFFERENCES`). Every name of that
registry is accepted, its diversity measures (``alpha_nDCG@20``, ``ERR_IA@20``, ...) as
ndeval's (:mod:`metrics.measures.diversity`), on diversity qrels.

Every other name of that registry (``ir_measures.measures.registry``: ``P@10``, ``MAP``,
``NDCG@10``, ``Judged@10``, ``NumRet(rel=1)``, ``SetP(relative=True)``, ``P(judged_only=True)@5``,
``INST(min_rel=1,max_rel=3)``, ...) is accepted by :func:`metrics.names.parse_measure`, with
ir_measures' parameters and defaults, and gives ir_measures' number: tests/metrics/
test_ir_measures_names.py iterates the registry and checks each name against ir_measures on the
bundled CAsT 2021 runs and on random collections (ties, unjudged documents, negative grades),
the diversity measures on random diversity collections, reading this list for the exceptions.

>>> translate("MAP(rel=2)@10"), translate("nDCG(gains={0:0,1:1,2:3})@10")
('AP(rel=2)@10', "nDCG(level_gains='2=3')@10")
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import split_name, split_params

# ir_measures' other names of a measure rpdi knows by its first name (ir_measures' registry also
# names NumRelRet = NumRet(rel=1) and SetRelP = SetP(relative=True): rpdi has both as measures)
ALIASES = {"MAP": "AP", "BPref": "Bpref", "NDCG": "nDCG", "Precision": "P", "Recall": "R",
           "RPrec": "Rprec", "MRR": "RR",
           # the diversity measures, by ndeval's names (NRBP and nNRBP are the same in both)
           "alpha_DCG": "alpha-DCG", "alpha_nDCG": "alpha-nDCG", "ERR_IA": "ERR-IA", "nERR_IA": "nERR-IA",
           "AP_IA": "MAP-IA", "MAP_IA": "MAP-IA", "P_IA": "P-IA", "StRecall": "strec"}


@dataclass(frozen=True)
class Difference:
    """How an ir_measures name fares in rpdi. ``when``: where rpdi's number differs from
    ir_measures' (and only there):

    - "ties": on a topic whose scores tie (the two order tied documents differently);
    - "scores <= 0": on a topic with a score <= 0 (Compat's ideal ranking puts a document
      retrieved with such a score after the unretrieved ones of its grade);
    - "default": under rpdi's defaults (the ``compat`` named in the reason gives ir_measures' number);
    - "undefined": where the value is undefined (ir_measures gives no number; rpdi counts it 0
      in the mean by default, or leaves it out with undefined='null');
    - "missing": on a qrels topic missing from the run (ir_measures' providers leave it out);
    - "parameters": the parameters mean otherwise (``equals`` maps an ir_measures name to the
      rpdi name with its number).
    """

    reason: str
    when: tuple[str, ...] = ()
    equals: dict[str, str] | None = None


_DIVERSITY = Difference("ir_measures' pyndeval provider orders tied scores docno ascending; rpdi, as trec_eval and "
                        "ndeval -traditional, descending. (pyndeval also refuses cutoffs above 20, and its "
                        "ERR_IA@1 and alpha_DCG@1 are not normalised: ndeval's arrays skip rank 1)",
                        when=("ties",))
_ASCENDING = "ir_measures' {} provider orders tied scores docno ascending; rpdi, as trec_eval, descending"
_INPUT_ORDER = ("ir_measures' {} provider keeps tied documents in the order the run lists them; rpdi, as "
                "trec_eval, orders them docno descending")

DIFFERENCES: dict[str, Difference] = {
    **{name: _DIVERSITY for name in ("ERR_IA", "nERR_IA", "alpha_DCG", "α_DCG", "alpha_nDCG", "α_nDCG",
                                     "NRBP", "nNRBP", "AP_IA", "MAP_IA", "P_IA", "StRecall")},
    "Accuracy": Difference(_INPUT_ORDER.format("accuracy") + "; where no relevant document is retrieved "
                           "(undefined) ir_measures leaves the topic out of its mean (so does rpdi's "
                           "undefined='null'; by default rpdi counts it 0), and where only relevant ones "
                           "are (rpdi: 1, no pair out of order) its provider divides by zero",
                           when=("ties", "undefined")),
    "Compat": Difference(_ASCENDING.format("compat") + "; within a grade its ideal ranking orders documents "
                         "by score, those not retrieved as if scored 0 and ties in the qrels' order, where "
                         "rpdi puts the retrieved ones first, in the ranking's order",
                         when=("ties", "scores <= 0")),
    **{name: Difference("a qrels topic missing from the run: ir_measures gives it 0, rpdi by default "
                        "evaluates it as an empty ranking (trec_eval -c: NumQ 1, NumRel its relevant "
                        "documents); topics='intersection' leaves it out, as ir_measures' mean does not",
                        when=("missing",)) for name in ("NumQ", "NumRel")},
    "IPrec": Difference("trec_eval 10.0's recall level lround(r R) relevant documents, deliberately; "
                        "ir_measures runs pytrec_eval (trec_eval 9.x: floor(r R + 0.9)), which "
                        "compat='pytrec_eval' reproduces", when=("default",)),
    "Judged": Difference(_ASCENDING.format("judged"), when=("ties",)),
    "MRR": Difference(_ASCENDING.format("msmarco") + " (it computes RR@k)", when=("ties",)),
    "RR": Difference(_ASCENDING.format("msmarco") + " (it computes RR@k)", when=("ties",)),
    "SetF": Difference("ir_measures hands beta to trec_eval's set_F, whose parameter weighs recall as "
                       "beta^2 does: its SetF(beta=b) is rpdi's SetF(beta2=b); rpdi's beta is van "
                       "Rijsbergen's (the same at beta = 1)", when=("parameters",),
                       equals={"SetF(beta=2.0)": "SetF(beta2=2.0)"}),
    **{name: Difference(_INPUT_ORDER.format("cwl_eval"), when=("ties",))
       for name in ("INST", "INSQ", "NERR8", "NERR9", "NERR10", "NERR11", "SDCG", "BPM")},
    "RBP": Difference(_INPUT_ORDER.format("cwl_eval") + "; it also spreads the weights over 1000 ranks "
                      "(RBP / (1 - p^1000): within 1e-9 for p <= 0.97)", when=("ties",)),
}


def ir_measures_text(measure) -> str | None:
    """The name of an ir_measures ``Measure`` object (``ir_measures.nDCG@10``), which it prints
    as ``str(measure)`` (its parameters at their defaults left out), recognised by the
    attributes every such object has (``NAME``, ``params``, ``SUPPORTED_PARAMS``) so that rpdi
    needs no ir_measures to take one; None for anything else."""
    if all(hasattr(measure, a) for a in ("NAME", "params", "SUPPORTED_PARAMS")):
        return str(measure)
    return None


def translate(text: str) -> str:
    """An ir_measures name as rpdi names the same measure: an alias (``MAP``) by rpdi's name,
    ``gains={0:0,1:1,2:3}`` (nDCG's custom gains) as trec_eval's ``level_gains='2=3'``,
    ``IPrec(recall=0.2)`` as ``IPrec@0.2``, ``α_nDCG`` as ``alpha-nDCG``; other names unchanged."""
    if text.lstrip().startswith("α_"):
        text = "alpha" + text.lstrip()[1:]
    name, params_text, cutoff_text = split_name(text)
    if name not in ALIASES and not re.search(r"\b(gains|recall)\s*=", params_text or ""):
        return text
    items = []
    for item in split_params(params_text, text):
        key, _, raw = item.partition("=")
        if key.strip() == "gains":
            pairs = _gains(raw.strip())
            item = "level_gains='" + ",".join(f"{level}={gain}" for level, gain in pairs.items()
                                              if level != gain) + "'"  # a grade left out keeps its gain
        elif key.strip() == "recall" and name == "IPrec":  # IPrec(recall=0.2) is IPrec@0.2
            cutoff_text = raw.strip()
            continue
        items.append(item)
    return (ALIASES.get(name, name) + (f"({','.join(items)})" if items else "")
            + (f"@{cutoff_text}" if cutoff_text is not None else ""))


def _gains(raw: str) -> dict:
    """ir_measures' gains mapping ``{grade: gain, ...}`` read as a literal."""
    try:
        pairs = ast.literal_eval(raw)
        if not isinstance(pairs, dict) or not all(isinstance(x, (int, float)) for kv in pairs.items() for x in kv):
            raise ValueError
    except (ValueError, SyntaxError):
        raise InputError(f"gains={raw}: expected a mapping of grades to gains, e.g. {{0:0,1:1,2:3}}") from None
    return pairs
