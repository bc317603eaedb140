"""What a browsing model is.

A browsing model is a stochastic automaton that reads a ranking's gain vector top-down. It has a
finite set of states (integers 0..K-1) with an initial distribution that may depend on the topic
(Robertson's target s ~ U{1..R}). At rank i the user inspects the document (depth N += 1) and
then, from (state, rank, gain), one of a few *branches* happens: with probability ``prob`` the
user accrues ``gain``, and continues to rank i + 1 in state ``state`` or stops.

Models are written with array semantics: ``step`` receives a state array of any shape and gains
that broadcast against it, so the exact evaluator (:mod:`usermodels.exact`, arrays of states
per topic) and the simulators (arrays of users) run the very same definition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import MEASURES, Measure, MeasureSpec, Param
from rpdi.metrics.names import parse_measure
from rpdi.metrics.rankings import Rankings
from rpdi.metrics.view import View, scaled_gains


DECLARED_AGGREGATIONS = ("rate", "mean_rate", "total")  # which expectation a model's value is
FIT_MARGIN = 1e-4  # a fitted probability stays this far inside (0, 1)
OPEN_UNIT = (FIT_MARGIN, 1 - FIT_MARGIN)  # the fit bounds of a probability


@dataclass(frozen=True)
class Declared:
    """An expected difference between a closed form and its model's exact value: ``relation``
    says how they relate, ``expected(closed, model, ranking)`` gives the exact value the model
    must have on a :class:`simulate.ranking.Ranking`."""

    why: str
    relation: str
    expected: Callable


@dataclass
class Branch:
    """One outcome of a step: probability, gain accrued, continue?, next state (None: same),
    and the time the document took on this branch (the cost; one unit by default)."""

    prob: np.ndarray | float
    gain: np.ndarray | float
    cont: np.ndarray | bool
    state: np.ndarray | int | None = None
    time: np.ndarray | float = 1.0


@dataclass
class At:
    """What the user meets at a rank: the ``gain`` of the document there; ``seen``, the gains of
    ranks 1..rank summed, and ``best``, the largest gain of ranks 1..rank-1 (deterministic
    summaries of the ranking's prefix, used by C/W/L models and HIT); ``words``, the document's
    length in words if the user gave lengths (``--doc-lengths``; NaN otherwise: time-based models
    then use their default)."""

    rank: int
    gain: np.ndarray
    seen: np.ndarray
    best: np.ndarray
    words: np.ndarray | float = np.nan


class BrowsingModel:
    """Base class: subclasses set the class attributes and override ``step`` (and, as needed,
    ``gains``, ``n_states``, ``initial`` and ``absorbed``).

    Class attributes: ``measure_name`` (the closed-form measure of the same name in
    :mod:`metrics`), ``aggregation`` (which expectation equals it: ``rate`` = E[G]/E[N],
    ``mean_rate`` = E[G/N], ``total`` = E[G]) and ``normalised`` (the value is divided by the same expectation on the
    topic's ideal ranking, as nDCG). With ``halflife`` set the user also has a time budget
    B ~ Exponential(ln 2 / halflife) and stops once the time spent exceeds it: the agent engine
    draws B and lets simulated time run out; the exact evaluator and the lockstep engine use
    the equivalent memoryless rule (a continuing user survives a document of time t with
    probability exp(-t ln 2 / halflife)).

    ``rule`` (the browsing rule in one sentence) and ``citation`` are stated once, in the
    measure's declaration (:data:`metrics.measures.registry.MEASURES`), and read from there; a model of
    one's own, whose measure is not declared, states them itself.

    What the fitter and the verdict need to know of a model is declared with it:
    ``fit_bounds`` (the parameters ``rpdi fit`` may fit, with their bounds, where the measure's
    name does not fix them), ``declared`` (a :class:`Declared` difference between the closed
    form and the exact value, where the model is not exactly its measure) and ``oracle`` (a
    method ``oracle(ranking, grades, ideal)``: the measure recomputed rank by rank from its
    definition, sharing no code with the closed form or the model, for closed forms whose
    helpers the model shares; None where it cannot say).
    """

    measure_name: ClassVar[str]
    aggregation: ClassVar[str]
    rule: ClassVar[str]
    citation: ClassVar[str]
    normalised: ClassVar[bool] = False
    horizon: ClassVar[int] = 10_000  # users still reading here stop (C/W/L: max_depth)
    halflife: ClassVar[float | None] = None  # a time budget B ~ Exponential(ln 2 / halflife)
    fit_bounds: ClassVar[dict[str, tuple[float, float]]] = {}
    declared: ClassVar[Declared | None] = None
    oracle: ClassVar[Callable | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        spec = MEASURES.get(getattr(cls, "measure_name", None))
        if spec is not None and "rule" not in vars(cls):
            cls.rule, cls.citation = spec.user_model, spec.citation

    def __init__(self, measure: Measure | str | None = None, /, *, cutoff: int | None = None, **params):
        """``RBP("RBP(p=0.9)@10")`` or ``RBP(p=0.9, cutoff=10)``: the model of a measure named or
        parsed, or of the class's own declaration with these parameters (unknown ones and values
        out of range raise InputError, as in a measure name)."""
        if measure is None:
            measure = self.declaration().measure(params, cutoff)
        elif params or cutoff is not None:
            raise TypeError(f"{type(self).__name__}: give a measure or parameters, not both")
        self.measure = parse_measure(measure) if isinstance(measure, str) else measure
        self.k = self.measure.depth
        for name, value in self.measure.params.items():
            setattr(self, name, value)

    @classmethod
    def declaration(cls) -> MeasureSpec:
        """The measure this model is the user of: the declared measure its class names in
        ``measure_name`` (a closed form exists), else one declared from the class itself: named
        after the class, with ``parameters`` (their types follow the defaults), ``rule`` and
        ``citation``, and no closed form (its value is the model's exact expectation).

        The class's declaration is checked first: InputError naming the class and the class
        attribute missing or wrong (a model of one's own is not trusted).

        >>> class Forgetful(BrowsingModel):
        ...     parameters = {"p": 0.5}
        ...     def step(self, state, at): return geometric(self.p, at.gain)
        >>> Forgetful.declaration()
        Traceback (most recent call last):
        ...
        rpdi.metrics.errors.InputError: Forgetful: class attribute aggregation is missing: set it to 'rate' (E[G]/E[N]), 'mean_rate' (E[G/N]) or 'total' (E[G])
        """
        spec = MEASURES.get(vars(cls).get("measure_name"))
        cls._check_declared(spec is None)
        if spec is not None:
            return spec
        from rpdi.usermodels.exact import ExactValue

        params = tuple(Param(key, type(default), default, f"{cls.__name__} parameter")
                       for key, default in getattr(cls, "parameters", {}).items())
        return MeasureSpec(cls.__name__, ExactValue(cls), params, "optional", getattr(cls, "rule", cls.__name__),
                           getattr(cls, "citation", "a model of one's own"), method="exact")

    @classmethod
    def _check_declared(cls, own: bool) -> None:
        """InputError naming the class and its class attribute that is missing or of the wrong
        kind; ``own``: the class declares its measure itself (``parameters``, ``rule``, ...)."""
        def wrong(what):
            raise InputError(f"{cls.__name__}: {what}")

        aggregation = getattr(cls, "aggregation", None)
        choices = "'rate' (E[G]/E[N]), 'mean_rate' (E[G/N]) or 'total' (E[G])"
        if aggregation is None:
            wrong(f"class attribute aggregation is missing: set it to {choices}")
        if aggregation not in DECLARED_AGGREGATIONS:
            wrong(f"class attribute aggregation is {aggregation!r}: set it to {choices}")
        if cls.step is BrowsingModel.step:
            wrong("defines no step(self, state, at) method")
        if not isinstance(cls.normalised, bool):
            wrong(f"class attribute normalised is {cls.normalised!r}, not True or False")
        if isinstance(cls.horizon, bool) or not isinstance(cls.horizon, int) or cls.horizon < 1:
            wrong(f"class attribute horizon is {cls.horizon!r}, not a whole number >= 1")
        if cls.halflife is not None and not (isinstance(cls.halflife, (int, float)) and cls.halflife > 0):
            wrong(f"class attribute halflife is {cls.halflife!r}, not None or a number > 0")
        if not own:
            return
        parameters = getattr(cls, "parameters", {})
        if not isinstance(parameters, dict):
            wrong(f"class attribute parameters is {parameters!r}, not a dict of name: default")
        for key, default in parameters.items():
            if not (isinstance(key, str) and key.isidentifier()):
                wrong(f"class attribute parameters: {key!r} is not a parameter name")
            if type(default) not in (int, float, str):
                wrong(f"class attribute parameters: {key} = {default!r}: a default is an int, a float or a str")
        for key in ("rule", "citation"):
            if not isinstance(getattr(cls, key, ""), str):
                wrong(f"class attribute {key} is {getattr(cls, key)!r}, not a str")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.measure.text!r})"

    # -- the model ------------------------------------------------------------------------
    def gains(self, grade: np.ndarray, view: View) -> np.ndarray:
        """The model's gain of a document of each grade: binary (grade >= rel) when the measure
        has a ``rel``, else (grade - min_rel) / (max_rel - min_rel) in [0, 1] (max_rel: the qrels'
        largest grade; min_rel 0: :func:`metrics.view.scaled_gains`)."""
        rel = self.measure.params.get("rel")
        if rel is not None:
            return (grade >= rel).astype(float)
        top = self.measure.params.get("max_rel") or view.max_grade
        return scaled_gains(grade, top, self.measure.params.get("min_rel", 0.0))

    def n_states(self, view: View) -> int:
        return 1

    def ideal_rankings(self, rankings: Rankings) -> Rankings:
        """Each topic's ideal ranking, the one run ``ideal`` a normalised model divides by: the
        topic's judged grades, best first (nDCG's)."""
        ideal = rankings.ideal
        return Rankings.of_grades(ideal[None], ideal, rankings.n_judged, rankings.max_grade,
                                  length=rankings.n_judged[None].copy(), runs=("ideal",), topics=rankings.topics)

    def state_values(self, view: View) -> np.ndarray:
        """What ``step`` receives as the state of each of the K states (default: 0..K-1)."""
        return np.arange(self.n_states(view))

    def draw_start(self, rng: np.random.Generator, users: int, start: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Start states of simulated users: one uniform draw each from the start distribution
        ``start`` over the state values (a model with a continuous population overrides it)."""
        cum = np.cumsum(start)
        return values[np.minimum(np.searchsorted(cum, rng.random(users) * cum[-1], side="right"), len(cum) - 1)]

    def initial(self, view: View) -> np.ndarray:
        """(S, T, K) probabilities of the starting states; a topic with no mass is undefined."""
        p = np.zeros(view.length.shape + (self.n_states(view),))
        p[..., 0] = 1.0
        return p

    def step(self, state: np.ndarray, at: At) -> list[Branch]:
        raise NotImplementedError

    def absorbed(self, state: np.ndarray, rank: int) -> np.ndarray | bool:
        """True for states that, from this rank on in a tail of zero gain, never stop (the
        user reads for ever: N is infinite, G/N is 0). Default: none."""
        return False

    # -- helpers for subclasses ------------------------------------------------------------
    def survival(self, time) -> np.ndarray | float:
        """Probability that the time budget outlasts a further ``time`` (1 without a budget)."""
        if self.halflife is None:
            return 1.0
        return np.exp(-np.asarray(time, dtype=float) * np.log(2) / self.halflife)

    def before_cutoff(self, rank: int) -> bool:
        """Whether a user at this rank may read on under the measure's cutoff k."""
        return self.k is None or rank < self.k


def geometric(p, gain, state=None) -> list[Branch]:
    """Read on with probability p, stop otherwise; the document's gain is accrued either way."""
    return [Branch(p, gain, True, state), Branch(1 - np.asarray(p, dtype=float), gain, False, state)]
