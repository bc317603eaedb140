"""trec_eval's measure names, translated into rpdi's measures.

A trec_eval family (``P``) prints one line per cutoff (``P_5``, ``P_10``, ...); ``P.5,10``
chooses the cutoffs, ``P_10`` names one line; ``ndcg.1=3,2=9`` gives parameters. Each line is an
rpdi measure (:mod:`metrics.measures`), named as trec_eval names it so that its grades are read
as trec_eval reads them. :func:`metrics.names.parse_measure` accepts these names too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import MEASURES, Measure, parse_declared, suggest

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecFamily:
    rpdi: str  # the rpdi measure, its cutoff or parameter written as {x}
    kind: str  # "single", "cutoffs" (integer), "levels" (float, printed %.2f) or "params"
    defaults: tuple = ()
    per_topic: bool = True  # printed for every topic (trec_eval -q)
    summary: bool = True  # printed for all topics
    integer: bool = False  # printed as an integer (counts)


TREC_FAMILIES: dict[str, TrecFamily] = {
    "runid": TrecFamily("", "single", per_topic=False),
    "num_q": TrecFamily("NumQ", "single", per_topic=False, integer=True),
    "num_ret": TrecFamily("NumRet", "single", integer=True),
    "num_rel": TrecFamily("NumRel(rel={rel})", "single", integer=True),
    "num_rel_ret": TrecFamily("NumRelRet(rel={rel})", "single", integer=True),
    "map": TrecFamily("AP(rel={rel})", "single"),
    "gm_map": TrecFamily("GMAP(rel={rel})", "single", per_topic=False),
    "Rprec": TrecFamily("Rprec(rel={rel})", "single"),
    "bpref": TrecFamily("Bpref(rel={rel})", "single"),
    "recip_rank": TrecFamily("RR(rel={rel})", "single"),
    "iprec_at_recall": TrecFamily("IPrec(rel={rel})@{x}", "levels", tuple(i / 10 for i in range(11))),
    "P": TrecFamily("P(rel={rel})@{x}", "cutoffs", CUTOFFS),
    "relstring": TrecFamily("", "cutoffs", (10,), summary=False),
    "recall": TrecFamily("R(rel={rel})@{x}", "cutoffs", CUTOFFS),
    "infAP": TrecFamily("infAP(rel={rel})", "single"),
    "gm_bpref": TrecFamily("GMBpref(rel={rel})", "single", per_topic=False),
    "Rprec_mult": TrecFamily("RprecMult(rel={rel},x={x})", "levels",
                             (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    "utility": TrecFamily("Utility(rel={rel},docs={docs}{x})", "params"),
    "11pt_avg": TrecFamily("AP11pt(rel={rel}{x})", "params"),
    "binG": TrecFamily("BinG(rel={rel})", "single"),
    "G": TrecFamily("G({x})", "params"),
    "dcg": TrecFamily("trec_dcg({x})", "params"),
    "ideal_dcg": TrecFamily("trec_ideal_dcg({x})", "params"),
    "ndcg": TrecFamily("nDCG({x})", "params"),
    "ndcg_rel": TrecFamily("nDCGrel({x})", "params"),
    "Rndcg": TrecFamily("RnDCG(rel={rel}{x})", "params"),
    "ndcg_cut": TrecFamily("nDCG@{x}", "cutoffs", CUTOFFS),
    "map_cut": TrecFamily("AP(rel={rel})@{x}", "cutoffs", CUTOFFS),
    "relative_P": TrecFamily("RelP(rel={rel})@{x}", "cutoffs", CUTOFFS),
    "success": TrecFamily("Success(rel={rel})@{x}", "cutoffs", (1, 5, 10)),
    "set_P": TrecFamily("SetP(rel={rel})", "single"),
    "set_relative_P": TrecFamily("SetRelP(rel={rel})", "single"),
    "set_recall": TrecFamily("SetR(rel={rel})", "single"),
    "set_map": TrecFamily("SetAP(rel={rel})", "single"),
    "set_F": TrecFamily("SetF(rel={rel}{x})", "params"),
    "num_nonrel_judged_ret": TrecFamily("NumNonRelJudgedRet(rel={rel})", "single", integer=True),
    "yaap": TrecFamily("YAAP(rel={rel})", "single"),
    "rbp": TrecFamily("trec_rbp({x})", "params"),
    "rbp_resid": TrecFamily("trec_rbp_resid({x})", "params"),
    "unj": TrecFamily("Unj@{x}", "cutoffs", (5, 10, 20)),
}
ALL_TREC = tuple(f for f in TREC_FAMILIES if f not in ("dcg", "ideal_dcg", "yaap"))  # trec_eval's -m all_trec
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P")  # trec_eval's default measures
SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
       "set_relative_P", "set_map", "set_F")  # trec_eval's unranked measures (-m set)
NICKNAMES = {"all_trec": ALL_TREC, "official": OFFICIAL, "set": SET}


def suggest_name(name: str) -> str:
    """"; did you mean X?" with the closest of rpdi's and trec_eval's names, or ""."""
    return suggest(name, [*MEASURES, *TREC_FAMILIES, "all_trec"])


@dataclass(frozen=True)
class TrecLine:
    """One line of trec_eval's output: its name, family and rpdi measure (None for runid and
    relstring, which are not numbers)."""

    name: str
    family: TrecFamily
    measure: Measure | None
    length: int | None = None  # relstring's number of documents


def trec_eval_selection(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The measures trec_eval computes for its ``-m`` arguments, as it reads them: each family
    once whatever names it (a nickname, the family, ``family.params``), in trec_eval's own order
    (its measures.c, not the command line's), with the parameters of the first ``family.params``
    given. Returns those as names for :func:`trec_lines`, and the names trec_eval has not (rpdi's,
    or one line such as ``P_10``) in their order.

    >>> trec_eval_selection(["P.5", "map", "P.10", "nDCG@10", "official"])[0][-3:]
    ['recip_rank', 'iprec_at_recall', 'P.5']
    """
    marked, params, rest = set(), {}, []
    for name in names:
        family, dot, given = name.strip().partition(".")
        if family in NICKNAMES and not dot:
            marked.update(NICKNAMES[family])
        elif family in TREC_FAMILIES:
            marked.add(family)
            if given:
                params.setdefault(family, given)
        else:
            rest.append(name)
    return [f + (f".{params[f]}" if f in params else "") for f in TREC_FAMILIES if f in marked], rest


def trec_lines(text: str, level: float = 1, docs: float = 0.0, strict: bool = True) -> list[TrecLine] | None:
    """The output lines of a trec_eval measure name: ``all_trec``, ``official``, a family
    (``P``, ``ndcg``), a family with parameters (``P.5,10``, ``ndcg.1=3,2=9``, ``utility.2,-1,0,0``)
    or one line (``P_10``, ``iprec_at_recall_0.20``). ``level`` is trec_eval's -l (the grade
    counted relevant), ``docs`` its -N. Unknown names raise InputError, or give None if not strict.

    >>> [line.name for line in trec_lines("P.10,5")], trec_lines("map")[0].measure.spec.name
    (['P_5', 'P_10'], 'AP')
    """
    text = text.strip()
    if text in NICKNAMES:
        return [line for family in NICKNAMES[text] for line in trec_lines(family, level, docs)]
    family_name, params = text, None
    if text not in TREC_FAMILIES:
        dotted = text.split(".", 1)
        underscored = text.rsplit("_", 1)
        if dotted[0] in TREC_FAMILIES and len(dotted) == 2:
            family_name, params = dotted[0], dotted[1]
        elif underscored[0] in TREC_FAMILIES and len(underscored) == 2 and \
                TREC_FAMILIES[underscored[0]].kind in ("cutoffs", "levels"):
            family_name, params = underscored
        elif not strict:
            return None
        else:
            raise InputError(f"measure {text!r}: unknown measure{suggest_name(text)} (see `rpdi measures`)")
    family = TREC_FAMILIES[family_name]
    try:
        return _family_lines(family_name, family, params, level, docs)
    except (ValueError, InputError) as exc:
        if not strict:
            return None
        raise InputError(f"measure {text!r}: bad trec_eval parameters {params!r} ({exc})") from None


def _family_lines(name: str, family: TrecFamily, params: str | None, level: float, docs: float) -> list[TrecLine]:
    def measure(x: str = "") -> Measure:
        return replace(parse_declared(family.rpdi.format(rel=level, docs=docs, x=x)), integer_grades=True)

    if name == "runid":
        return [TrecLine(name, family, None)]
    if family.kind in ("cutoffs", "levels"):
        values = family.defaults if params is None else [float(x) for x in params.split(",") if x.strip()]
        lines = []
        for x in sorted(set(values)):
            if family.kind == "cutoffs":
                k = int(x)
                label = f"{name}_{k}"
                if name == "relstring":
                    lines.append(TrecLine(name if params is None else label, family, None, k))
                    continue
                lines.append(TrecLine(label, family, replace(measure(str(k)), text=label)))
            else:
                label = f"{name}_{x:.2f}"
                lines.append(TrecLine(label, family, replace(measure(repr(float(x))), text=label)))
        return lines
    if family.kind == "single":
        if params is not None:
            raise ValueError("this measure takes no parameters")
        return [TrecLine(name, family, replace(measure(), text=name))]
    label = name if params is None else f"{name}_{params}"
    return [TrecLine(label, family, replace(measure(_params(name, params)), text=label))]


def _params(name: str, params: str | None) -> str:
    """trec_eval's parameter text as rpdi parameters (with a leading comma where rpdi's measure
    already has parameters)."""
    if params is None:
        return ""
    if name == "utility":
        a, b, c, d = (float(x) for x in params.split(","))
        return f",a={a},b={b},c={c},d={d}"
    if name == "11pt_avg":
        return f",levels='{params}'"
    if name == "set_F":  # trec_eval's parameter weighs recall as beta^2 does
        return f",beta2={float(params)}"
    if name == "Rndcg":
        return f",level_gains='{params}'"
    if name in ("rbp", "rbp_resid"):
        pairs = dict(item.split("=") for item in params.split(","))
        return f"p={float(pairs['p'])}" if "p" in pairs else ""
    return f"level_gains='{params}'"
