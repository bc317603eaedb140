"""``rpdi measures``: the closed-form measures, their parameters, formulas and references."""

from __future__ import annotations

from rpdi.metrics import MEASURES
from rpdi.metrics.ir_measures_names import ALIASES
from rpdi.metrics.trec_names import TREC_FAMILIES


def run(args) -> str:
    lines = []
    for spec in MEASURES.values():
        cutoff = {"required": "@k", "optional": "[@k]", "none": ""}[spec.cutoff]
        lines.append(f"{spec.name_with_defaults()}{cutoff}\n    {spec.formula}\n    user: {spec.user_model}\n"
                     f"    ref:  {spec.citation}")
    lines.append("ir_measures' names (its aliases: " + ", ".join(f"{a} = {n}" for a, n in ALIASES.items())
                 + "; judged_only=True reads a ranking without its unjudged documents; where rpdi's "
                 "number differs: DIFFERENCES in metrics/ir_measures_names.py)")
    lines.append("X-IA for any measure X above that has no X-IA of its own (RBP-IA(p=0.8), nDCG-IA@10): X's user "
                 "having first drawn an intent i with probability P(i|q), on diversity qrels (--intents FILE)")
    lines.append("trec_eval 10.0 names (aliases, with trec_eval's parameters, e.g. P_10, P.5,10, "
                 "ndcg.1=3,2=9; all_trec, official): " + ", ".join(TREC_FAMILIES))
    return "\n".join(lines) + "\n"
