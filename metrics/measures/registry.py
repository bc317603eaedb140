"""How a measure is declared and named: its typed parameters (:class:`Param`), its declaration
(:class:`MeasureSpec`), the registry of declared measures (:data:`MEASURES`, filled by
:func:`register`) and the parsing of rpdi's names, ``NAME(param=value, ...)@cutoff``, into a
:class:`Measure`.

Names follow ir_measures: ``P@10``, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``, ``RBP(p=0.8)``,
``RBP(rel=1,p=0.8)@10``; a measure ir_measures knows keeps its ir_measures meaning. trec_eval's
names are translated in :mod:`metrics.trec_names`; :func:`metrics.names.parse_measure` accepts both.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.kernels import parse_gains
from rpdi.metrics.view import Score


@dataclass(frozen=True)
class Param:
    """A typed parameter: ``kind`` is int, float, bool (``True``/``False``) or str; ``check``
    names the valid range."""

    name: str
    kind: type
    default: Any
    doc: str
    check: Callable[[Any], bool] = lambda x: True
    valid: str = ""
    optional: bool = False  # None is a valid value (the default then means "not given")
    reading: bool = False  # how the rankings are read (judged_only), not the user's: not in name_with_defaults


@dataclass(frozen=True)
class MeasureSpec:
    """A measure's declaration: its name, closed form, typed parameters, cutoff, its user in one
    sentence and a citation, and how its values are computed and averaged over topics."""

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
    method: str = "closed_form"  # "exact": compute is a browsing model's exact expectation (no closed form)
    intents: bool = False  # reads the subtopics of diversity qrels (metrics.diversity)
    session: bool = False  # reads a session's turns end to end (metrics.sessions.SessionRankings)

    def name_with_defaults(self) -> str:
        """The name with every parameter at its default: ``RBP(p=0.8, rel=None, max_rel=None)``
        (the parameters of reading, such as judged_only, left out)."""
        params = ", ".join(f"{p.name}={p.default!r}" for p in self.params if not p.reading)
        return f"{self.name}({params})" if params else self.name

    def measure(self, params: dict, cutoff: int | float | None = None) -> "Measure":
        """The measure with these parameter values (the others at their defaults) and cutoff,
        checked as a measure name is: ``spec.measure({"p": 0.9}, 10)`` is ``RBP(p=0.9)@10``."""
        given = ",".join(f"{key}={value!r}" for key, value in params.items())
        text = self.name + (f"({given})" if given else "") + ("" if cutoff is None else f"@{cutoff}")
        return parse_declared(text, {self.name: self})

    @property
    def formula(self) -> str:
        """The first line of the closed form's docstring: its formula."""
        doc = (self.compute.__doc__ or "").strip() if self.compute and self.method == "closed_form" else ""
        return doc.splitlines()[0] if doc else "(no closed form)"


MEASURES: dict[str, MeasureSpec] = {}  # by name, in the order registered (the order of `rpdi measures`)


def register(*specs: MeasureSpec) -> None:
    """Declare measures: each becomes a name that :func:`parse_declared` (so every command and the
    Python API) accepts, listed in the order registered. A family module of
    :mod:`metrics.measures` registers its measures when imported. A name declared twice is an
    InputError, unless it is the same declaration made again (its module executed a second time,
    as pytest's doctest collection does): that is ignored."""
    for spec in specs:
        known = MEASURES.get(spec.name)
        if known is None:
            MEASURES[spec.name] = spec
        elif _source(known) != _source(spec):
            raise InputError(f"measure {spec.name!r}: declared twice")


def _source(spec: MeasureSpec) -> tuple:
    """Where a declaration comes from: its closed form's file and line, its parameters and user."""
    code = spec.compute.__code__ if spec.compute else None
    return (code and (code.co_filename, code.co_firstlineno), spec.name_with_defaults(), spec.user_model,
            spec.citation)


# parameters that several families declare
REL = Param("rel", float, 1, "minimum grade counted as relevant", lambda x: x > 0, "> 0")
MAX_REL = Param("max_rel", float, None, "grade mapped to gain 1 (default: the qrels' largest grade)",
                lambda x: x > 0, "> 0", optional=True)
MIN_REL = Param("min_rel", float, 0.0, "grade mapped to gain 0, and every grade below it (ir_measures' min_rel)",
                lambda x: x >= 0, ">= 0")


def _gains_ok(text: str) -> bool:
    try:
        parse_gains(text)
    except ValueError:
        return False
    return True


JUDGED_ONLY = Param("judged_only", bool, False,
                    "read the ranking without its unjudged documents, the rest moving up (trec_eval -J)",
                    reading=True)


LEVEL_GAINS = Param("level_gains", str, "", "trec_eval's level=gain pairs, e.g. '1=3,2=9' (default: gain = grade)",
                    _gains_ok, "level=gain pairs")


def persistence(name: str, doc: str, default: float = 0.8) -> Param:
    """A probability of reading on, in [0, 1)."""
    return Param(name, float, default, doc, lambda x: 0 <= x < 1, "in [0, 1)")


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

    def compute(self, view) -> Score:
        """The closed form on the view; with ``judged_only=True`` on the view's rankings without
        their unjudged documents (:data:`JUDGED_ONLY`)."""
        if self.spec.compute is None:
            raise InputError(f"measure {self.text!r}: has no closed form (a browsing model only: "
                             f"use rpdi simulate or rpdi properties)")
        kwargs = dict(self.params, **self.spec.extra)
        if kwargs.pop("judged_only", False):
            from rpdi.metrics.rankings import judged_only
            from rpdi.metrics.view import View

            view = View(judged_only(view.rankings), view.cutoff, view.compat)
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

    >>> from rpdi.metrics.measures.registry import parse_declared  # the registry the families filled
    >>> m = parse_declared("RBP(p=0.95)@10")
    >>> m.spec.name, m.params["p"], m.cutoff
    ('RBP', 0.95, 10)
    """
    name, params_text, cutoff_text = split_name(text)
    measures = MEASURES if measures is None else measures
    spec = measures.get(name) or intent_aware_spec(name, measures)
    if spec is None:
        raise InputError(f"measure {text!r}: unknown measure {name!r}{suggest(name, measures)} "
                         f"(see `rpdi measures`)")
    declared = {p.name: p for p in spec.params}
    values = {p.name: p.default for p in spec.params}
    for item in split_params(params_text, text):
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


IA_SUFFIX = "-IA"


def intent_aware_spec(name: str, measures: dict[str, MeasureSpec]) -> MeasureSpec | None:
    """``X-IA`` for a declared measure X that declares no ``X-IA`` of its own: X read by a user
    who first draws an intent i with probability P(i|q) and then reads the ranking with intent
    i's grades (:func:`metrics.measures.diversity_ia.intent_aware`); X's parameters and cutoff,
    written as X's: ``RBP-IA(p=0.8)@10``, ``nDCG-IA@10``. None if ``name`` is no such name.

    >>> from rpdi.metrics.measures.registry import MEASURES, intent_aware_spec  # the families' registry
    >>> spec = intent_aware_spec("RBP-IA", MEASURES)
    >>> spec.name, spec.intents, [p.name for p in spec.params][:1]
    ('RBP-IA', True, ['p'])
    """
    if not name.endswith(IA_SUFFIX) or name[:-len(IA_SUFFIX)] not in measures:
        return None
    if measures[name[:-len(IA_SUFFIX)]].session:  # a session's turns with intents: not defined here
        return None
    from rpdi.metrics.measures.diversity_ia import intent_aware

    base = measures[name[:-len(IA_SUFFIX)]]
    return MeasureSpec(name, intent_aware if base.compute else None, base.params, base.cutoff,
                       f"draws an intent i with probability P(i|q), then {base.user_model} (intent i's grades)",
                       f"Agrawal et al. 2009 (intent-aware); {base.citation}", cutoff_kind=base.cutoff_kind,
                       passes_cutoff=True, between_runs=base.between_runs, residual=base.residual,
                       extra={"base": base}, average=base.average, model=base.model, method=base.method,
                       intents=True)


def split_params(params_text: str | None, text: str) -> list[str]:
    """The ``name=value`` items, split at the commas outside quotes and braces (ir_measures
    writes a mapping as ``gains={0:0,1:1}``)."""
    if params_text is None or not params_text.strip():
        return []
    items, start, quote, depth = [], 0, None, 0
    for i, c in enumerate(params_text):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "{}":
            depth += 1 if c == "{" else -1
        elif c == "," and depth == 0:
            items.append(params_text[start:i])
            start = i + 1
    items.append(params_text[start:])
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
        if param.kind is bool:
            value = {"true": True, "false": False}[raw.lower()]
        elif param.kind is int:
            value = int(raw)
        elif param.kind is float:
            value = float(raw)
            if not math.isfinite(value):
                raise ValueError
        else:
            value = raw
    except (ValueError, KeyError):
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
