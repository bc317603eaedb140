"""rpdi as an ir_measures provider: ir_measures' users (and PyTerrier's ``Experiment``, which
hands its measures to ir_measures) get rpdi's numbers, for ir_measures' measures and rpdi's own.

Importing this module (it imports ir_measures, a third of a second, so ``import rpdi`` does not)
registers :data:`provider` as ir_measures' provider ``rpdi`` (``ir_measures.providers.registry
["rpdi"]``): ``provider.calc_aggregate(measures, qrels, run)``, ``provider.iter_calc``,
``provider.evaluator`` ask rpdi for every measure. :func:`install` also appends it to
``ir_measures.DefaultPipeline`` as the last provider asked: ``ir_measures.calc_aggregate`` (and
PyTerrier's ``Experiment``) then serve with rpdi the measures no other provider has (``BetaRBP``,
``TBG``, a model of one's own) and leave the others to theirs.

A PyTerrier or ir_measures user gets it with ``import rpdi.usermodels.ir_measures_provider``
(the provider registered), or ``rpdi.ir_measures_provider.install()`` (registered, and rpdi
also ir_measures' last resort). ``import rpdi`` after ir_measures registers it by itself
(rpdi's ``__init__`` looks for ir_measures among the imported modules; it imports nothing
otherwise), so ``ir_measures.providers.registry["rpdi"]`` is rpdi's provider.

A measure is an ir_measures ``Measure`` object, as ir_measures' users write them (``nDCG@10``,
``RBP(p=0.8)``; rpdi reads its name, :mod:`metrics.ir_measures_names`), or one of rpdi's made by
:func:`measure` from an rpdi name (``measure("BetaRBP(a=2,b=3)")``), a model of one's own
named by file or module (``measure("my_model.py:TwoStrikes(n=2)")``) or a BrowsingModel class
or instance. After :func:`install`, rpdi's measures ir_measures lacks are also
known by name to ir_measures' parser, so ``ir_measures.parse_measure("BetaRBP(a=2.0)")`` (and
a PyTerrier measure given as text) finds them. Each is a small ``Measure`` subclass per rpdi measure: its parameters are
the declaration's (:class:`~metrics.measures.registry.Param`), it prints as rpdi's name, and
its ``NAME`` is ``rpdi.<name>``, which no other provider claims.

Values are ``rpdi.evaluate``'s, per topic over the qrels' topics (a topic the run misses is an
empty ranking, as trec_eval -c), and aggregated as rpdi aggregates them (the mean; the sum for
counts; the geometric mean for GMAP). Not served: the diversity and intent-aware measures
(their subtopics are not in ir_measures' qrels; ir_measures' pyndeval provider has ndeval's),
the session measures, and those that compare two runs (RBO).

>>> import ir_measures
>>> from rpdi.usermodels.ir_measures_provider import measure, provider
>>> qrels = {"q1": {"a": 1, "b": 0, "c": 1}}
>>> run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}
>>> values = provider.calc_aggregate([ir_measures.P @ 2, measure("BetaRBP(a=2,b=3)")], qrels, run)
>>> {str(m): round(v, 4) for m, v in values.items()}  # BetaRBP: E[(1 - p)(1 + p^2)], p ~ Beta(2, 3)
{'P@2': 0.5, 'BetaRBP(a=2.0,b=3.0)': 0.6857}
"""

from __future__ import annotations

import math

import ir_measures
from ir_measures import Metric, providers
from ir_measures.measures.base import Agg, MeanAgg, ParamInfo, SumAgg
from ir_measures.util import CalcResults

from rpdi.metrics.errors import InputError
from rpdi.metrics.evaluate import MIN_GEO_MEAN
from rpdi.metrics.frames import qrels_from, runs_from
from rpdi.metrics.measures.registry import MEASURES, Measure, MeasureSpec
from rpdi.metrics.names import parse_measure
from rpdi.usermodels.base import BrowsingModel
from rpdi.usermodels.plugin import is_plugin, load_plugin
from rpdi.usermodels.scoring import evaluate

_CLASSES: dict[tuple, type] = {}  # (printed name, model class or None) -> its Measure subclass


def measure(name) -> ir_measures.Measure:
    """The ir_measures ``Measure`` of an rpdi measure: a name (``"BetaRBP(a=2,b=3)"``), a
    model of one's own by file or module (``"path.py:Class(n=2)@5"``), or a BrowsingModel class
    or instance. It prints as the rpdi name (its parameters at their defaults left out).

    >>> str(measure("RBP2(p1=0.7)@10")), str(measure("RBP2")(p1=0.5) @ 5)
    ('RBP2(p1=0.7)@10', 'RBP2(p1=0.5)@5')
    """
    if isinstance(name, str) and is_plugin(name):
        model = load_plugin(name)
        if model.measure.spec.intents:
            raise InputError(f"measure {name!r}: an intent-aware user reads subtopics, which ir_measures' qrels lack")
        printed = name.strip().split("(")[0].split("@")[0]
        return _instance(_measure_class(printed, type(model).declaration(), type(model)), model.measure)
    if isinstance(name, type) and issubclass(name, BrowsingModel):
        name = name()
    if isinstance(name, BrowsingModel):
        cls = type(name)
        spec = name.measure.spec
        return _instance(_measure_class(spec.name, spec, None if spec.name in MEASURES else cls), name.measure)
    if not isinstance(name, str):
        raise InputError(f"measure {name!r}: expected an rpdi name or a BrowsingModel, not {type(name).__name__}")
    parsed = parse_measure(name)
    return _instance(_measure_class(parsed.spec.name, parsed.spec, None), parsed)


def _instance(cls: type, parsed: Measure) -> ir_measures.Measure:
    """The ir_measures measure of class ``cls`` with the parsed measure's parameters and cutoff."""
    params = {key: value for key, value in parsed.params.items() if value != cls.SUPPORTED_PARAMS[key].default}
    if parsed.cutoff is not None:
        params["cutoff"] = parsed.cutoff
    return cls(**params)


def _measure_class(printed: str, spec: MeasureSpec, model: type | None) -> type:
    """The Measure subclass of an rpdi declaration, printed as ``printed``; ``model``: the
    class of a model of one's own, whose measure is made from the parameters (None: rpdi reads
    the printed name)."""
    key = (printed, model)
    if key not in _CLASSES:
        params = {p.name: ParamInfo(dtype=(int, float) if p.kind is float else p.kind, default=p.default,
                                    desc=p.doc) for p in spec.params}
        if spec.cutoff != "none":
            params["cutoff"] = ParamInfo(dtype=(int, float) if spec.cutoff_kind is float else int,
                                         required=spec.cutoff == "required", desc="ranking cutoff")
        _CLASSES[key] = type(f"Rpdi_{spec.name}", (ir_measures.Measure,), {
            "__name__": printed, "NAME": f"rpdi.{printed}", "SUPPORTED_PARAMS": params, "MODEL": model,
            "SHORT_DESC": spec.user_model, "AVERAGE": spec.average,
            "aggregator": lambda self: _AGGREGATORS[self.AVERAGE](),
        })
    return _CLASSES[key]


class _GeometricAgg(Agg):
    """The geometric mean of the values, each at least 0.00001 (trec_eval's gm_map)."""

    def __init__(self):
        self.logs = []

    def add(self, value):
        self.logs.append(math.log(max(value, MIN_GEO_MEAN)))

    def result(self):
        return math.exp(math.fsum(self.logs) / len(self.logs)) if self.logs else float("nan")


_AGGREGATORS = {"mean": MeanAgg, "sum": SumAgg, "geometric": _GeometricAgg}


def rpdi_measure(m) -> Measure:
    """The rpdi measure an ir_measures measure names (InputError if none or not served here)."""
    model = getattr(type(m), "MODEL", None)
    parsed = model(**m.params).measure if model is not None else parse_measure(str(m))
    if parsed.spec.intents or parsed.spec.session or parsed.spec.between_runs:
        raise InputError(f"measure {str(m)!r}: not served by rpdi's ir_measures provider "
                         f"(diversity, session and between-run measures need what ir_measures' inputs lack)")
    return parsed


class RpdiProvider(providers.Provider):
    """rpdi's closed forms (and exact expectations of models without one) as an ir_measures provider."""

    NAME = "rpdi"

    def supports(self, measure) -> bool:
        try:
            rpdi_measure(measure)
        except InputError:
            return False
        return True

    def _evaluator(self, measures, qrels) -> "RpdiEvaluator":
        measures = list(dict.fromkeys(measures))
        parsed = [rpdi_measure(m) for m in measures]
        return RpdiEvaluator(measures, parsed, qrels_from(qrels))


class RpdiEvaluator(providers.Evaluator):
    """Evaluates runs against one set of qrels with ``rpdi.evaluate``."""

    def __init__(self, measures: list, parsed: list[Measure], qrels):
        super().__init__(measures, set(qrels.topic.dictionary.to_pylist()))
        self.qrels = qrels
        self.by_text = {}  # the records name rpdi's measures; several of ir_measures' may name one
        for p, m in zip(parsed, measures):
            self.by_text.setdefault(p.text, []).append(m)
        self.parsed = list({p.text: p for p in parsed}.values())

    def _records(self, run) -> list[dict]:
        runs = runs_from(run, "<run>")
        if len(runs) != 1:
            raise InputError(f"<run>: holds {len(runs)} runs (a run column); give ir_measures one run at a time")
        return evaluate(self.qrels, runs, self.parsed, per_topic=True)

    def _iter_calc(self, run):
        return self.calc(run).per_query

    def calc_aggregate(self, run) -> dict:
        """rpdi's aggregate of each measure (its ``all`` record)."""
        return self.calc(run).aggregated

    def calc(self, run) -> CalcResults:
        """rpdi's aggregates (the ``all`` records) and per-topic values; a run that retrieves
        nothing gives each measure's default (ir_measures' convention)."""
        if isinstance(run, dict) and not run:
            return CalcResults({m: m.DEFAULT for m in self.measures},
                               [Metric(q, m, m.DEFAULT) for m in self.measures for q in sorted(self.qrel_qids)])
        aggregated, per_query = {}, []
        for record in self._records(run):
            for m in self.by_text[record["measure"]]:
                if record["topic"] == "all":
                    aggregated[m] = record["value"]
                else:
                    per_query.append(Metric(query_id=record["topic"], measure=m, value=record["value"]))
        return CalcResults(aggregated, per_query)


provider = RpdiProvider()
providers.register(provider)


def install() -> None:
    """Make rpdi ir_measures' last resort: append :data:`provider` to ``ir_measures.DefaultPipeline``
    (``ir_measures.calc_aggregate``, and so PyTerrier, then serve with rpdi the measures no other
    provider has) and register rpdi's measures ir_measures lacks with its parser
    (``ir_measures.parse_measure("BetaRBP(a=2.0)")``). Changes ir_measures' global state, so
    asked for, not done on import; calling it again changes nothing."""
    if provider not in ir_measures.DefaultPipeline.providers:
        ir_measures.DefaultPipeline.providers.append(provider)
    for spec in MEASURES.values():
        if spec.name.isidentifier() and spec.name not in ir_measures.measures.registry:
            ir_measures.measures.register(_measure_class(spec.name, spec, None)(), name=spec.name)
