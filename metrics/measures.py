"""Measure declarations and the parsing of rpdi's measure names.

Every measure is declared once here — name, typed parameters with defaults and valid ranges,
its cutoff, user model, citation — apart from the code that computes it
(:mod:`metrics.closed_forms`). Names follow ir_measures: ``P@10``, ``P(rel=2)@5``,
``nDCG(dcg='exp-log2')@10``, ``RBP(p=0.8)``, ``RBP(rel=1,p=0.8)@10``; a measure ir_measures knows
keeps its ir_measures meaning. trec_eval's names are translated in :mod:`metrics.trec_names`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from rpdi.metrics import closed_forms as cf
from rpdi.metrics.errors import InputError


@dataclass(frozen=True)
class Param:
    """A typed parameter: ``kind`` is int, float or str; ``check`` names the valid range."""

    name: str
    kind: type
    default: Any
    doc: str
    check: Callable[[Any], bool] = lambda x: True
    valid: str = ""
    optional: bool = False  # None is a valid value (the default then means "not given")


@dataclass(frozen=True)
class MeasureSpec:
    name: str
    compute: Callable | None  # None: a browsing model of one's own, with no closed form
    params: tuple[Param, ...]
    cutoff: str  # "required", "optional" or "none"
    user_model: str
    citation: str
    cutoff_kind: type = int
    passes_cutoff: bool = False  # the closed form takes the cutoff itself (Rprec, IPrec)
    between_runs: bool = False  # compares each run with the first (RBO)
    micro: bool = False  # per-topic num/den, so a micro-average exists
    residual: bool = False
    extra: dict = field(default_factory=dict)  # fixed keyword arguments of compute
    average: str = "mean"  # across topics: "mean", "sum" (counts) or "geometric" (trec_eval gm_*)
    model: bool = True  # False: no browsing model exists (bpref, infAP, ...; user_model says why)

    def name_with_defaults(self) -> str:
        """The name with every parameter at its default: ``RBP(p=0.8, rel=None, max_rel=None)``."""
        params = ", ".join(f"{p.name}={p.default!r}" for p in self.params)
        return f"{self.name}({params})" if params else self.name

    @property
    def formula(self) -> str:
        """The first line of the closed form's docstring: its formula."""
        doc = (self.compute.__doc__ or "").strip() if self.compute else ""
        return doc.splitlines()[0] if doc else "(no closed form)"


def _rel(default: float = 1) -> Param:
    return Param("rel", float, default, "minimum grade counted as relevant", lambda x: x > 0, "> 0")


_MAX_REL = Param("max_rel", float, None, "grade mapped to gain 1 (default: the qrels' largest grade)",
                 lambda x: x > 0, "> 0", optional=True)
_DCG = Param("dcg", str, "log2", "'log2': gain g (trec_eval); 'exp-log2': gain 2^g - 1",
             lambda x: x in ("log2", "exp-log2"), "'log2' or 'exp-log2'")
def _levels_ok(text: str) -> bool:
    try:
        return all(0 <= x <= 1 for x in cf.parse_levels(text))
    except ValueError:
        return False


def _gains_ok(text: str) -> bool:
    try:
        cf.parse_gains(text)
    except ValueError:
        return False
    return True


_GAINS = Param("level_gains", str, "", "trec_eval's level=gain pairs, e.g. '1=3,2=9' (default: gain = grade)",
               _gains_ok, "level=gain pairs")
_T = Param("T", float, 3.0, "expected number of relevant documents wanted", lambda x: x > 0, "> 0")
_BETA = Param("beta", float, 1.0, "weight of recall against precision", lambda x: x > 0, "> 0")
_P = Param("p", float, 0.8, "persistence: probability of reading on", lambda x: 0 <= x < 1, "in [0, 1)")


def _finite(x: float) -> bool:
    return math.isfinite(x)


def _persistence_09(name: str) -> Param:
    return Param(name, float, 0.9, "persistence (trec_eval's default 0.9)", lambda x: 0 <= x < 1, "in [0, 1)")


def _persistence(name: str, doc: str) -> Param:
    return Param(name, float, 0.8, doc, lambda x: 0 <= x < 1, "in [0, 1)")


MEASURES: dict[str, MeasureSpec] = {s.name: s for s in [
    MeasureSpec("P", cf.precision, (_rel(),), "required",
                "reads exactly k documents", "trec_eval P_k; Moffat 2013", micro=True),
    MeasureSpec("R", cf.recall, (_rel(),), "required",
                "reads k documents, counts the share of all relevant ones met", "trec_eval recall_k",
                micro=True),
    MeasureSpec("SetP", cf.set_precision, (_rel(),), "none",
                "reads the whole retrieved set", "trec_eval set_P", micro=True),
    MeasureSpec("SetR", cf.set_recall, (_rel(),), "none",
                "reads the whole retrieved set", "trec_eval set_recall", micro=True),
    MeasureSpec("F", cf.f_measure, (_rel(), _BETA), "required",
                "reads k documents; harmonic mean of P@k and R@k", "van Rijsbergen 1979"),
    MeasureSpec("SetF", cf.set_f, (_rel(), _BETA, Param("beta2", float, None, "beta^2 itself, overriding beta "
                                                         "(trec_eval's set_F parameter)", lambda x: x > 0,
                                                         "> 0", optional=True)), "none",
                "reads the whole retrieved set; harmonic mean of SetP and SetR", "trec_eval set_F"),
    MeasureSpec("Fallout", cf.fallout, (_rel(),), "required",
                "reads k documents, counts the share of judged non-relevant ones met",
                "Salton & McGill 1983", micro=True),
    MeasureSpec("RelP", cf.relative_precision, (_rel(),), "required",
                "reads exactly k documents; P@k over the best P@k possible", "trec_eval relative_P"),
    MeasureSpec("SetRelP", cf.set_relative_precision, (_rel(),), "none",
                "reads the whole retrieved set; SetP over the best SetP possible", "trec_eval set_relative_P"),
    MeasureSpec("SetAP", cf.set_ap, (_rel(),), "none",
                "reads the whole retrieved set; SetP x SetR", "trec_eval set_map"),
    MeasureSpec("AP", cf.average_precision, (_rel(),), "optional",
                "draws a target s ~ U{1..R}, reads to the s-th relevant document, reports the "
                "precision there (0 if never found)", "Robertson 2008; trec_eval map"),
    MeasureSpec("SP", cf.sum_precision, (_rel(),), "required",
                "AP's user without the division by R", "Aslam, Pavlu & Yilmaz 2006; Moffat 2013"),
    MeasureSpec("SN-AP", cf.sn_ap, (_rel(),), "required",
                "AP's user with R replaced by the relevant documents in the top k", "Moffat 2013"),
    MeasureSpec("IPrec", cf.iprec, (_rel(),), "required",
                "interpolated precision at a recall level (lround(r R) relevant documents, trec_eval "
                "10.0; floor(r R + 0.9) under --compat pytrec_eval)", "trec_eval iprec_at_recall",
                cutoff_kind=float, passes_cutoff=True),
    MeasureSpec("AP11pt", cf.eleven_point_ap,
                (_rel(), Param("levels", str, "", "comma-separated recall levels (default 0, 0.1, ..., 1)",
                               _levels_ok, "numbers in [0, 1]")), "none",
                "mean interpolated precision at recall 0, 0.1, ..., 1", "trec_eval 11pt_avg"),
    MeasureSpec("GMAP", cf.average_precision, (_rel(),), "none",
                "AP's user; the geometric mean over topics (each AP at least 0.00001)",
                "Robertson 2006; trec_eval gm_map", average="geometric", model=False),
    MeasureSpec("YAAP", cf.yaap, (_rel(),), "none",
                "no browsing model: AP smoothed for averaging over topics", "Robertson 2012; trec_eval yaap",
                model=False),
    MeasureSpec("RR", cf.reciprocal_rank, (_rel(),), "optional",
                "stops at the first relevant document", "trec_eval recip_rank; Moffat 2013"),
    MeasureSpec("RR2", cf.rr2, (_rel(),), "optional",
                "a sceptic: stops at the second relevant document", "Moffat & Zobel 2008 s4.4"),
    MeasureSpec("CautiousRR", cf.cautious_rr,
                (_rel(), Param("c", int, 1, "documents read past the first relevant one",
                               lambda x: x >= 0, ">= 0")), "optional",
                "stops c documents after the first relevant one", "Moffat & Zobel 2008 s4.4"),
    MeasureSpec("Rprec", cf.r_precision, (_rel(),), "optional",
                "reads R documents (at most k)", "trec_eval Rprec; Moffat 2013", passes_cutoff=True),
    MeasureSpec("RprecMult", cf.rprec_mult,
                (_rel(), Param("x", float, 1.0, "multiple of R read", lambda x: x >= 0, ">= 0")), "none",
                "reads floor(x R + 0.9) documents", "trec_eval Rprec_mult"),
    MeasureSpec("Success", cf.success, (_rel(),), "required",
                "satisfied by any relevant document in the top k", "trec_eval success_k"),
    MeasureSpec("HIT", cf.hit, (_MAX_REL,), "required",
                "satisfied by the best document in the top k (graded)", "Moffat 2013"),
    MeasureSpec("Best", cf.best, (), "required",
                "satisfied only by a document of the topic's highest grade", "product reference"),
    MeasureSpec("DCG", cf.dcg, (_DCG, Param("b", int, None, "Järvelin-Kekäläinen log base "
                                            "(no discount up to rank b)", lambda x: x >= 2, ">= 2",
                                            optional=True)), "optional",
                "reads every document, attention fading as 1/log(rank)",
                "Järvelin & Kekäläinen 2002; Moffat 2013"),
    MeasureSpec("nDCG", cf.ndcg, (_DCG, _GAINS), "optional",
                "DCG's user, scored against the best ranking of this topic",
                "Järvelin & Kekäläinen 2002; trec_eval ndcg_cut"),
    MeasureSpec("SDCG", cf.sdcg, (_MAX_REL,), "required",
                "continues from rank i with probability log2(i+1)/log2(i+2), up to rank k",
                "Moffat 2013"),
    MeasureSpec("CG", cf.cg, (), "required", "reads k documents, adding up their grades",
                "Järvelin & Kekäläinen 2002"),
    MeasureSpec("SN-DCG", cf.sn_dcg, (_DCG,), "required",
                "DCG's user, scored against the best reordering of the top k", "Moffat 2013"),
    MeasureSpec("RBP", cf.rbp, (_P, Param("rel", float, None, "binary gains at this grade "
                                          "(default: graded gains grade/max_rel)",
                                          lambda x: x > 0, "> 0", optional=True), _MAX_REL),
                "optional", "reads on with probability p after every document",
                "Moffat & Zobel 2008", residual=True),
    MeasureSpec("BetaRBP", cf.beta_rbp,
                (Param("a", float, 8.0, "Beta shape a of the persistence", lambda x: x > 0, "> 0"),
                 Param("b", float, 2.0, "Beta shape b of the persistence", lambda x: x > 0, "> 0"),
                 Param("rel", float, None, "binary gains at this grade (default: grade/max_rel)",
                       lambda x: x > 0, "> 0", optional=True), _MAX_REL),
                "none", "a population of RBP users whose persistence p ~ Beta(a, b)",
                "Carterette, Kanoulas & Yilmaz 2011; Moffat & Zobel 2008", residual=True),
    MeasureSpec("RBP2", cf.rbp2, (_persistence("p1", "persistence after a relevant document"),
                                  _persistence("p2", "persistence after a non-relevant document"),
                                  _rel()), "optional",
                "reads on with probability p1 after a relevant document, p2 after another",
                "Moffat & Zobel 2008 s4.4"),
    MeasureSpec("trec_rbp", cf.trec_rbp, (_persistence_09("p"),), "none",
                "RBP's user (grades divided by the topic's largest grade if above 1); rpdi's RBP scales "
                "by the qrels' largest grade and reports the residual with the tail",
                "Moffat & Zobel 2008; trec_eval rbp"),
    MeasureSpec("trec_rbp_resid", cf.trec_rbp_resid, (_persistence_09("p"),), "none",
                "no browsing model: RBP's residual as trec_eval reports it (0 if all retrieved are judged)",
                "trec_eval rbp_resid", model=False),
    MeasureSpec("ERR", cf.err, (Param("max_rel", float, 4.0, "grade of certain satisfaction",
                                      lambda x: x > 0, "> 0"),), "optional",
                "stops satisfied at rank i with probability (2^g_i - 1)/2^max_rel",
                "Chapelle et al. 2009; gdeval"),
    *[MeasureSpec(name, cf.cwl_rate, params, cutoff,
                  f"C/W/L user reading on with probability {rule}", citation, passes_cutoff=True,
                  extra={"family": name})
      for name, params, cutoff, rule, citation in [
          ("INST", (_T, _MAX_REL), "none", "((i+T+T_i-1)/(i+T+T_i))^2, T_i = T - gain so far",
           "Moffat, Bailey, Scholer & Thomas 2017"),
          ("INSQ", (_T, _MAX_REL), "none", "((i+2T-1)/(i+2T))^2",
           "Moffat, Bailey, Scholer & Thomas 2017"),
          ("NERR8", (_MAX_REL,), "required", "1 - r_i up to rank k (Eq. 8)",
           "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR9", (_MAX_REL,), "required", "i/(i+1) (1 - r_i) up to rank k (Eq. 9)",
           "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR10", (_persistence("p", "patience phi"), _MAX_REL), "none", "phi (1 - r_i) (Eq. 10)",
           "Azzopardi, Mackenzie & Moffat 2021"),
          ("NERR11", (_T, _MAX_REL), "none", "((i+2T-1)/(i+2T))^2 (1 - r_i) (Eq. 11)",
           "Azzopardi, Mackenzie & Moffat 2021"),
      ]],
    MeasureSpec("TBG", cf.tbg, (Param("halflife", float, 224.0, "half-life of the time budget (s)",
                                      lambda x: x > 0, "> 0"),
                                Param("words", float, 1000.0, "length in words of a document the lengths file (--doc-lengths) does not give",
                                      lambda x: x >= 0, ">= 0"), _rel()), "none",
                "reads snippets, clicks and saves, until a time budget with this half-life runs out",
                "Smucker & Clarke 2012"),
    MeasureSpec("NumQ", cf.num_q, (), "none", "no browsing model: counts the evaluated topics",
                "trec_eval num_q", average="sum", model=False),
    MeasureSpec("NumRet", cf.num_ret, (), "none", "no browsing model: counts retrieved documents",
                "trec_eval num_ret", average="sum", model=False),
    MeasureSpec("NumRel", cf.num_rel, (_rel(),), "none", "no browsing model: counts relevant documents",
                "trec_eval num_rel", average="sum", model=False),
    MeasureSpec("NumRelRet", cf.num_rel_ret, (_rel(),), "none",
                "no browsing model: counts relevant retrieved documents", "trec_eval num_rel_ret",
                average="sum", model=False),
    MeasureSpec("NumNonRelJudgedRet", cf.num_nonrel_judged_ret, (_rel(),), "none",
                "no browsing model: counts judged non-relevant retrieved documents",
                "trec_eval num_nonrel_judged_ret", average="sum", model=False),
    MeasureSpec("Bpref", cf.bpref, (_rel(),), "none",
                "no browsing model: the share of (relevant, judged non-relevant) pairs ranked in order",
                "Buckley & Voorhees 2004; trec_eval bpref", model=False),
    MeasureSpec("GMBpref", cf.bpref, (_rel(),), "none",
                "no browsing model: bpref's geometric mean over topics", "trec_eval gm_bpref",
                average="geometric", model=False),
    MeasureSpec("infAP", cf.inf_ap, (_rel(),), "none",
                "no browsing model: an estimate of AP from sampled judgments",
                "Yilmaz & Aslam 2006; trec_eval infAP", model=False),
    MeasureSpec("Utility", cf.utility,
                (_rel(), Param("a", float, 1.0, "gain of a relevant retrieved document", _finite, "finite"),
                 Param("b", float, -1.0, "gain of a non-relevant retrieved document", _finite, "finite"),
                 Param("c", float, 0.0, "gain of a relevant document not retrieved", _finite, "finite"),
                 Param("d", float, 0.0, "gain of a non-relevant document not retrieved", _finite, "finite"),
                 Param("docs", float, 0.0, "documents in the collection (trec_eval -N)", lambda x: x >= 0, ">= 0")),
                "none", "no browsing model: a linear utility of the retrieved set", "trec_eval utility",
                model=False),
    MeasureSpec("Unj", cf.unjudged, (), "required",
                "no browsing model: the share of unjudged documents in the top k", "trec_eval unj",
                model=False),
    MeasureSpec("G", cf.g_measure, (_GAINS,), "none",
                "no browsing model: gain discounted by the ideal gain still missing", "trec_eval G",
                model=False),
    MeasureSpec("BinG", cf.g_measure, (_rel(),), "none",
                "no browsing model: G with binary gains", "trec_eval binG", model=False,
                extra={"binary": True, "level_gains": ""}),
    MeasureSpec("nDCGrel", cf.ndcg_rel, (_GAINS,), "none",
                "no browsing model: the mean nDCG at the relevant documents", "trec_eval ndcg_rel",
                model=False),
    MeasureSpec("RnDCG", cf.r_ndcg, (_rel(), _GAINS), "none",
                "no browsing model: the mean nDCG where the ideal gain drops (R for binary judgments)",
                "trec_eval Rndcg", model=False),
    MeasureSpec("trec_dcg", cf.trec_dcg, (_GAINS,), "none",
                "no browsing model under this name: DCG of the whole ranking with trec_eval's level=gain "
                "gains (rpdi's DCG is the reader's)", "trec_eval dcg", model=False),
    MeasureSpec("trec_ideal_dcg", cf.trec_ideal_dcg, (_GAINS,), "none",
                "no browsing model: the DCG of the best ranking of the judged documents",
                "trec_eval ideal_dcg", model=False),
    MeasureSpec("RBO", cf.rbo, (_persistence("p", "persistence of the comparison"),), "optional",
                "compares each run's ranking with the first run's", "Webber, Moffat & Zobel 2010",
                between_runs=True, extra={"extrapolate": False}),
    MeasureSpec("RBO_EXT", cf.rbo, (_persistence("p", "persistence of the comparison"),), "optional",
                "RBO extrapolated beyond the shorter list", "Webber, Moffat & Zobel 2010",
                between_runs=True, extra={"extrapolate": True}),
]}


@dataclass(frozen=True)
class Measure:
    """A parsed measure name: its declaration, parameter values and cutoff. ``integer_grades``:
    named as trec_eval names it, so grades are read as trec_eval reads them (1.5 as 1); rpdi's
    own names keep fractional grades for graded gains."""

    text: str
    spec: MeasureSpec
    params: dict
    cutoff: int | float | None
    integer_grades: bool = False

    def compute(self, view) -> "cf.Score":
        if self.spec.compute is None:
            raise InputError(f"measure {self.text!r}: has no closed form (a browsing model only: "
                             f"use rpdi simulate or rpdi properties)")
        kwargs = dict(self.params, **self.spec.extra)
        if self.spec.passes_cutoff:
            kwargs["level" if self.spec.cutoff_kind is float else "cutoff"] = self.cutoff
        return self.spec.compute(view, **kwargs)

    def at_depth(self, k: int) -> "Measure":
        """The same measure with its cutoff set to k (unchanged if it takes no rank cutoff)."""
        if self.spec.cutoff == "none" or self.spec.cutoff_kind is not int:
            return self
        return Measure(f"{self.text.split('@')[0]}@{k}", self.spec, self.params, k)

    @property
    def depth(self) -> int | None:
        """How deep the closed form reads (None: the whole ranking)."""
        if self.cutoff is None or self.spec.passes_cutoff:
            return None
        return int(self.cutoff)


_NAME = re.compile(r"^\s*([A-Za-z][\w\-]*)\s*(?:\((.*)\))?\s*(?:@\s*([^@()]+?))?\s*$")


def split_name(text: str) -> tuple[str, str | None, str | None]:
    """``NAME(param=value, ...)@cutoff`` as its name, parameter text and cutoff text."""
    match = _NAME.match(text)
    if not match:
        raise InputError(f"measure {text!r}: cannot parse (expected NAME(param=value,...)@cutoff)")
    return match.groups()


def parse_declared(text: str, measures: dict[str, MeasureSpec] | None = None) -> Measure:
    """Parse ``NAME(param=value, ...)@cutoff`` against the declarations (default: MEASURES);
    :func:`metrics.names.parse_measure` also accepts trec_eval's names.

    >>> m = parse_declared("RBP(p=0.95)@10")
    >>> m.spec.name, m.params["p"], m.cutoff
    ('RBP', 0.95, 10)
    """
    name, params_text, cutoff_text = split_name(text)
    measures = MEASURES if measures is None else measures
    spec = measures.get(name)
    if spec is None:
        raise InputError(f"measure {text!r}: unknown measure {name!r}{suggest(name, measures)} "
                         f"(see `rpdi measures`)")
    declared = {p.name: p for p in spec.params}
    values = {p.name: p.default for p in spec.params}
    for item in _split_params(params_text, text):
        key, _, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise InputError(f"measure {text!r}: {name} has no parameter {key!r} (parameters: {known})")
        values[key] = _convert(declared[key], raw, text)
    cutoff = None
    if cutoff_text is not None:
        if spec.cutoff == "none":
            raise InputError(f"measure {text!r}: {name} takes no cutoff")
        cutoff = _cutoff(spec, cutoff_text.strip(), text)
    elif spec.cutoff == "required":
        raise InputError(f"measure {text!r}: {name} needs a cutoff, e.g. {name}@10")
    return Measure(text, spec, values, cutoff)


def _split_params(params_text: str | None, text: str) -> list[str]:
    if params_text is None or not params_text.strip():
        return []
    items = [x for x in re.split(r",(?=(?:[^'\"]*['\"][^'\"]*['\"])*[^'\"]*$)", params_text)]
    for item in items:
        if "=" not in item:
            raise InputError(f"measure {text!r}: parameter {item.strip()!r} is not of the form name=value")
    return items


def _convert(param: Param, raw: str, text: str):
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        raw = raw[1:-1]
    if param.optional and raw in ("None", "none", "null"):
        return None
    try:
        if param.kind is int:
            value = int(raw)
        elif param.kind is float:
            value = float(raw)
            if not math.isfinite(value):
                raise ValueError
        else:
            value = raw
    except ValueError:
        raise InputError(f"measure {text!r}: {param.name}={raw!r} is not a valid "
                         f"{param.kind.__name__}") from None
    if not param.check(value):
        raise InputError(f"measure {text!r}: {param.name}={raw} out of range ({param.name} {param.valid})")
    return value


def _cutoff(spec: MeasureSpec, raw: str, text: str):
    try:
        value = spec.cutoff_kind(raw)
    except ValueError:
        raise InputError(f"measure {text!r}: cutoff {raw!r} is not a valid "
                         f"{spec.cutoff_kind.__name__}") from None
    if spec.cutoff_kind is int and value < 1:
        raise InputError(f"measure {text!r}: cutoff {raw} out of range (>= 1)")
    if spec.cutoff_kind is float and not 0 <= value <= 1:
        raise InputError(f"measure {text!r}: recall level {raw} out of range ([0, 1])")
    return value


def suggest(name: str, known) -> str:
    """"; did you mean X?" with the closest of the ``known`` names to ``name``, or ""."""
    import difflib

    known = list(known)
    close = [n for n in known if n.lower() == name.lower()] or difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {close[0]}?" if close else ""
