"""The verdict's cells: one comparison each, typed by what it compares.

Exact checks (:class:`Reading`, :class:`Streams`, :class:`Defined`, :class:`Oracle`,
:class:`ClosedVsExact`, :class:`ZeroVariance`) hold or not (``ok``); stochastic cells
(:class:`Mean`, :class:`Variance`, and the family's :class:`Spread` that the verdict pools from
the runs' :class:`Dispersion` cells) carry a z-score and enter the verdict's family
(:func:`simulate.verdict.verdict`); :class:`Jointly` is the verdict's failure of screened-out
cells that disagree together. Every cell
names its run, topic ("all": every topic) and measure, the experiment task it came from
(``task``, set by ``rpdi run``), and says in one line what it found (:meth:`Cell.text`).
``as_dict``/:func:`cell_from_dict` are its JSON form (the key ``kind`` names the class), as
stored in an experiment's task results and verdict.json.

Example: ``ClosedVsExact("r1", "7", "RR", closed_form=0.5, exact=0.5, expected=0.5,
relation="exact = closed form", ok=True).as_dict()["kind"] == "closed_vs_exact"``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar


TAIL = ("ok", "task", "p_screen", "p_confirm")  # the JSON form's last keys, in this order


@dataclass(frozen=True, kw_only=True)
class Cell:
    run: str
    topic: str
    measure: str
    task: str | None = None
    kind: ClassVar[str]

    def as_dict(self) -> dict:
        """The JSON form: run, topic, measure, kind, the fields of the kind, then ``TAIL`` (None
        left out)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        body = [k for k in fields if k not in ("run", "topic", "measure") + TAIL] + [k for k in TAIL if k in fields]
        return ({"run": self.run, "topic": self.topic, "measure": self.measure, "kind": self.kind}
                | {k: fields[k] for k in body if fields[k] is not None})

    def where(self) -> str:
        return f"run {self.run}, topic {self.topic}, {self.measure}"

    def text(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class Exact(Cell):
    """A deterministic check: it holds (``ok``) or the verdict fails."""

    ok: bool


@dataclass(frozen=True, kw_only=True)
class Reading(Exact):
    kind: ClassVar[str] = "reading"
    wrong_topics: int

    def text(self) -> str:
        return (f"run {self.run}, topic {self.topic}: ranking order differs from a plain sort by (score, docno) "
                f"descending on {self.wrong_topics} topics")


@dataclass(frozen=True, kw_only=True)
class Streams(Exact):
    kind: ClassVar[str] = "streams"
    tasks: int
    shared: list

    def text(self) -> str:
        (r1, t1), (r2, t2) = self.shared[0]
        return (f"{self.measure}: {len(self.shared)} of {self.tasks} rankings draw the same users as another "
                f"(run {r1}, topic {t1} and run {r2}, topic {t2}): the streams are not keyed by the task")


@dataclass(frozen=True, kw_only=True)
class Defined(Exact):
    """A run's rankings where the closed form is defined (``closed``) and where the model's exact
    value is defined too (``both``): a model undefined on all of them is a slip, not fewer checks."""

    kind: ClassVar[str] = "defined"
    closed: int
    both: int

    def text(self) -> str:
        return (f"{self.where()}: the model is undefined on all {self.closed} rankings where its closed "
                f"form is defined")


@dataclass(frozen=True, kw_only=True)
class Oracle(Exact):
    kind: ClassVar[str] = "oracle"
    closed_form: float
    expected: float

    def text(self) -> str:
        return (f"{self.where()}: closed form vs its plain rank-by-rank formula: closed form "
                f"{self.closed_form:.12g}, formula {self.expected:.12g}")


@dataclass(frozen=True, kw_only=True)
class ClosedVsExact(Exact):
    kind: ClassVar[str] = "closed_vs_exact"
    closed_form: float
    exact: float
    expected: float
    relation: str

    def text(self) -> str:
        return (f"{self.where()}: closed form vs exact ({self.relation}): closed form {self.closed_form:.12g}, "
                f"exact {self.exact:.12g}, expected {self.expected:.12g}")


@dataclass(frozen=True, kw_only=True)
class ZeroVariance(Exact):
    kind: ClassVar[str] = "zero_variance"
    engine: str
    estimate: float
    exact: float

    def text(self) -> str:
        return (f"{self.where()}, {self.engine} engine: simulated vs exact where the outcome does not vary: "
                f"estimate {self.estimate:.12g}, exact {self.exact:.12g}")


@dataclass(frozen=True, kw_only=True)
class Stochastic(Cell):
    """A z-score in the verdict's family; ``p_screen`` and ``p_confirm`` are set by the verdict
    on the cells its first stage screens out."""

    engine: str
    p_screen: float | None = None
    p_confirm: float | None = None

    def _p(self) -> str:
        return f"screen p {self.p_screen:.2g}" + (f", confirmation p {self.p_confirm:.2g}"
                                                  if self.p_confirm is not None else "")


@dataclass(frozen=True, kw_only=True)
class Mean(Stochastic):
    kind: ClassVar[str] = "mean"
    estimate: float
    exact: float
    z: float
    users: int

    def text(self) -> str:
        return (f"{self.where()}, {self.engine} engine: simulated vs exact: estimate {self.estimate:.6g}, exact "
                f"{self.exact:.6g}, z {self.z:.2f}, {self.users} users, {self._p()}")


@dataclass(frozen=True, kw_only=True)
class Variance(Stochastic):
    kind: ClassVar[str] = "variance"
    sample: float
    model: float
    z: float
    users: int

    def text(self) -> str:
        return (f"{self.where()}, {self.engine} engine: sample variance vs model variance: mean square deviation "
                f"{self.sample:.6g}, model {self.model:.6g}, z {self.z:.2f}, {self._p()}")


@dataclass(frozen=True, kw_only=True)
class Dispersion(Cell):
    """One run's share of the family's dispersion test (:func:`simulate.sample.dispersion`): over
    its ``rankings`` whose outcome varies, ``sum_z2`` = sum z_t^2 and ``bound`` >= Var(sum z_t^2)
    when users are independent, ``slack`` the chance that a bound used fails; ``users`` per ranking."""

    kind: ClassVar[str] = "dispersion"
    engine: str
    rankings: int
    sum_z2: float
    bound: float
    slack: float
    users: int

    def text(self) -> str:
        return f"{self.where()}, {self.engine} engine: sum of z^2 {self.sum_z2:.6g} over {self.rankings} rankings"


@dataclass(frozen=True, kw_only=True)
class Spread(Stochastic):
    """The family's dispersion test: the z-scores of every simulated ranking (all runs, measures
    and engines), whose squares have mean 1 each when users are independent: ``sum_z2`` against
    ``rankings``, z = (sum_z2 - rankings)/sqrt(bound) (``slack``: the chance that a bound used
    fails). Users that share random draws leave every
    mean unbiased but spread the z-scores wider."""

    kind: ClassVar[str] = "spread"
    rankings: int
    sum_z2: float
    bound: float
    slack: float
    z: float

    def text(self) -> str:
        way = "over" if self.z > 0 else "under"
        return (f"the z-scores of {self.rankings} simulated rankings are {way}-dispersed: "
                f"sum of z^2 {self.sum_z2:.6g} against {self.rankings} expected (variance at most {self.bound:.6g}), "
                f"z {self.z:.2f}, {self._p()}: users' draws are not independent, or the estimates are biased "
                f"(then the tests of the mean fail too)")


@dataclass(frozen=True, kw_only=True)
class Jointly(Cell):
    """The screened-out cells that no confirmation rejects one by one, rejected together: Fisher's
    combination of the ``cells`` confirmation p-values has p-value ``p`` (see
    :func:`simulate.verdict.verdict`)."""

    kind: ClassVar[str] = "jointly"
    cells: int
    p: float

    def text(self) -> str:
        return (f"the {self.cells} cells screened out, none of them confirmed one by one, disagree together: "
                f"Fisher's combination of their confirmation p-values, p {self.p:.2g}")


KINDS: dict[str, type[Cell]] = {cls.kind: cls for cls in (Reading, Streams, Defined, Oracle, ClosedVsExact,
                                                           ZeroVariance, Mean, Variance, Dispersion, Spread, Jointly)}


def cell_from_dict(d: dict) -> Cell:
    """The cell of a JSON form written by :meth:`Cell.as_dict`."""
    return KINDS[d["kind"]](**{k: v for k, v in d.items() if k != "kind"})
