"""Experiment configs: TOML validated with pydantic, expanded into measure names.

A mistake (a misspelt or misplaced key, a wrong type, a bad measure, a missing file) raises
:class:`metrics.errors.InputError` with one line naming the key path, e.g. ``experiment.sed:
unknown key; did you mean 'seed'?``; a measure is named as the file writes it (``[[measures]]
'RBP(p={p})': placeholder 'p' not in the grid``), as the file numbers none.
"""

from __future__ import annotations

import difflib
import glob
import itertools
import os
import typing
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from rpdi.choices import CORRECTIONS, INTERVALS, TESTS, TIES
from rpdi.metrics.errors import InputError
from rpdi.simulate.settings import Settings, validation_message
from rpdi.usermodels.plugin import anchored


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


class Experiment(Settings):
    """The simulation settings (validated as on the command line) and the experiment's name."""

    name: str = Field(min_length=1)
    alpha: float = Field(0.01, gt=0, lt=1, description="family-wise error rate of the three-way verdict")


CAST_SESSIONS = "cast"  # data.sessions: the sessions CAsT's topic ids SESSION_TURN name
MAX_SYNTHETIC = 50_000_000  # ranked documents of a synthetic collection (a few GB of arrays)


class Synthetic(_Strict):
    topics: int = Field(50, ge=1)
    runs: int = Field(10, ge=1)
    depth: int = Field(100, ge=1)
    seed: int = 1
    max_grade: int = Field(3, ge=1)
    pool_depth: int = Field(20, ge=0, description="documents of every run judged per topic")
    no_relevant: float = Field(0.1, ge=0, le=1, description="share of topics with nothing relevant")

    @model_validator(mode="after")
    def _fits_in_memory(self):
        documents = self.topics * self.runs * self.depth
        if documents > MAX_SYNTHETIC:
            raise ValueError(f"topics x runs x depth = {documents:.3g} ranked documents, more than the "
                             f"{MAX_SYNTHETIC:.0e} a synthetic collection may hold in memory")
        return self


class Data(_Strict):
    qrels: str | None = None
    runs: list[str] | None = None
    intents: str | None = Field(None, description="intent probabilities P(i|q), 'topic subtopic probability' "
                                                  "lines, for diversity and intent-aware (X-IA) measures")
    sessions: str | None = Field(None, description="what the session measures (see `rpdi measures`) read: a session file "
                                                   "('session position topic' lines), or \"cast\": the qrels' "
                                                   "CAsT topic ids SESSION_TURN (106_3: turn 3 of 106)")
    synthetic: Synthetic | None = None

    @model_validator(mode="after")
    def _one_source(self):
        files = self.qrels is not None or self.runs is not None
        if files == (self.synthetic is not None):
            raise ValueError("give either qrels and runs, or [data.synthetic]")
        if files and (self.qrels is None or not self.runs):
            raise ValueError("give both qrels and runs")
        if self.intents is not None and self.synthetic is not None:
            raise ValueError("intents: read with diversity qrels, not with [data.synthetic]")
        if self.sessions is not None and self.synthetic is not None:
            raise ValueError("sessions: read with qrels and runs, not with [data.synthetic]")
        return self


class MeasureGrid(_Strict):
    name: str = Field(min_length=1, description="measure name, with {param} placeholders for the grid")
    grid: dict[str, list[float | int | str]] = {}


class Output(_Strict):
    dir: str | None = None
    plots: bool = True


class Analysis(_Strict):
    agreement: bool = Field(False, description="Kendall's tau between metrics' system orderings and "
                                               "significance counts (paired t-test, Wilcoxon)")
    residual_depths: list[int] = Field([], description="evaluation depths for the residual-bounds plot")
    accuracy: float | None = Field(None, gt=0, lt=1, description="report the depth each RBP needs for "
                                                                   "a residual below this")
    worked_examples: bool = Field(False, description="reproduce the RBP paper's worked examples with the "
                                                     "library for the config's RBP p values: Table II (the "
                                                     "contributions on $$---$----$-----$---) and the "
                                                     "residual bounds on $$---$----$-??--?---")


class Compare(_Strict):
    """``[compare]``: paired tests between the runs on every measure (closed-form per-topic values),
    and the measures' discriminative power (Sakai 2006)."""

    test: Literal[TESTS] = "randomization"
    correction: Literal[CORRECTIONS] = "holm"
    alpha: float = Field(0.05, gt=0, lt=1)
    resamples: int = Field(10_000, ge=1, description="sign flips / bootstrap resamples / Tukey permutations")
    interval: Literal[INTERVALS] | None = None
    baseline: str | None = Field(None, description="a run name; default: all pairs")
    discriminative_power: bool = Field(True, description="ASLs over all run pairs, and their curves")
    users: int | None = Field(None, ge=0, description="add P(a user of B fares better than one of A); "
                                                      "simulated users where not exact (0: exact only)")
    ties: Literal[TIES] = Field("trec_eval", description="equal scores in trec_eval's order (docno descending), "
                                                         "or the values compared are expectations over random "
                                                         "orders (expected), or also give each difference's "
                                                         "range over them (range)")

    @model_validator(mode="after")
    def _ties_without_users(self):
        if self.ties != "trec_eval" and self.users is not None:
            raise ValueError(f"ties {self.ties}: not given with users yet (the users' preference reads "
                             f"trec_eval's order)")
        return self


class AgentCheck(_Strict):
    """Measures also simulated by the agent engine (on the first ``runs`` runs), in the verdict."""

    measures: list[str] = Field(min_length=1)
    users: int = Field(1000, ge=1)
    runs: int = Field(1, ge=1)


class Config(_Strict):
    experiment: Experiment
    data: Data
    measures: list[MeasureGrid] = Field(min_length=1)
    agent_check: AgentCheck | None = None
    output: Output = Output()
    analysis: Analysis = Analysis()
    compare: Compare | None = None
    _names: list[str] | None = PrivateAttr(None)  # the measure names, once expanded
    _written: dict[str, str] = PrivateAttr(default_factory=dict)  # resolved name -> as written
    _templates: list[str] = PrivateAttr(default_factory=list)  # each [[measures]] name as written


def load_config(path: str) -> tuple[Config, str]:
    """Parse and validate a TOML config; returns it and the directory paths are relative to."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a config file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"{path}: {_problem(exc, raw)}") from None
    base = os.path.dirname(os.path.abspath(path))
    written = [entry.name for entry in config.measures]
    config._templates = list(written)
    # a model of one's own: its file relative to the config, else to the working directory
    for template, entry in zip(written, config.measures):
        try:
            entry.name = anchored(entry.name, base)
        except InputError as exc:
            raise _measure_error(path, template, exc) from None
    expand_measures(config, path)
    config._written = {name: shown for entry, template in zip(config.measures, written)
                       for name, shown in zip([entry.name] + _grid_names(entry),
                                              [template] + _grid_names(entry, template))}
    resolve_files(config, base, path)
    return config, base


def expand_measures(config: Config, path: str = "config") -> list[str]:
    """Every measure name of the config, grids expanded (in the order given); each must have a
    browsing model. Expanded once per config (loading a model may execute a model file of one's
    own); later calls return the same names."""
    from rpdi.usermodels import model_for

    if config._names is not None:
        return list(config._names)
    names = []
    templates = config._templates or [entry.name for entry in config.measures]
    for template, entry in zip(templates, config.measures):
        try:
            expanded = _grid_names(entry)
        except (KeyError, IndexError, ValueError) as exc:
            raise _measure_error(path, template, f"placeholder {exc} not in the grid") from None
        for name in expanded:
            try:
                model_for(name)
            except InputError as exc:
                raise _measure_error(path, template, exc) from None
            names.append(name)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"{path}: measures: {dup!r} is listed twice")
    agent = config.agent_check
    for name in agent.measures if agent is not None else []:
        if name not in names:
            raise InputError(f"{path}: agent_check.measures: {name!r} is not one of the measures")
    config._names = names
    return list(names)


def _measure_error(path: str, template: str, problem) -> InputError:
    """An error in the ``[[measures]]`` entry whose name the file writes as ``template``, naming
    it so (a model's own message that already quotes it is not quoted twice)."""
    problem = str(problem).removeprefix(f"measure {template!r}: ")
    return InputError(f"{path}: [[measures]] {template!r}: {problem}")


def _problem(exc: ValidationError, raw: dict) -> str:
    """A validation error's first problem in one line: where (the key path; a ``[[measures]]``
    entry by the name the file gives it, or its place when it has none) and what, with the
    nearest valid key for an unknown one."""
    where, msg = validation_message(exc)
    loc = exc.errors()[0]["loc"]
    if msg == "unknown key":
        keys = _keys_at(Config, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), keys, n=1)
        msg += f"; did you mean {close[0]!r}?" if close else f" (the keys here: {', '.join(keys)})"
    if len(loc) >= 2 and loc[0] == "measures" and isinstance(loc[1], int):
        entry = (raw.get("measures") or [])[loc[1]]
        name = entry.get("name") if isinstance(entry, dict) else None
        label = f"[[measures]] {name!r}" if isinstance(name, str) else f"[[measures]] entry {loc[1] + 1}"
        where = ": ".join([label] + ([".".join(str(x) for x in loc[2:])] if loc[2:] else []))
    return f"{where}: {msg}"


def _keys_at(model: type[BaseModel], loc: tuple) -> list[str]:
    """The keys the config accepts at the table ``loc`` (a key path below ``model``)."""
    for part in loc:
        if isinstance(part, int):  # an entry of a list of tables
            continue
        field = model.model_fields.get(part)
        model = _table_type(field.annotation) if field is not None else None
        if model is None:
            return []
    return list(model.model_fields)


def _table_type(annotation) -> type[BaseModel] | None:
    """The table (pydantic model) a field's type holds: ``Compare``, ``Compare | None``, ``list[MeasureGrid]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next(filter(None, map(_table_type, typing.get_args(annotation))), None)


def _grid_names(entry: MeasureGrid, template: str | None = None) -> list[str]:
    """The names of one measure entry, its grid expanded (``template``: another spelling of the
    entry's name with the same placeholders)."""
    keys = list(entry.grid)
    template = entry.name if template is None else template
    return [template.format(**dict(zip(keys, values)))
            for values in itertools.product(*(entry.grid[k] for k in keys))]


def shown_name(config: Config, name: str) -> str:
    """A measure name as the config wrote it: a model of one's own with its path relative to the
    config, not the absolute path it is run under."""
    return config._written.get(name, name)


def resolve_files(config: Config, base: str, path: str = "config") -> None:
    """Make data paths absolute (relative to the config file), expanding globs of runs."""
    data = config.data
    if data.qrels is None:
        return
    qrels = os.path.join(base, data.qrels)
    if not os.path.isfile(qrels):
        raise InputError(f"{path}: data.qrels: no such file: {qrels}")
    from rpdi.metrics.uncertain_eval import has_pairs

    if has_pairs(qrels):
        raise InputError(f"{path}: data.qrels: {qrels} has grade distributions (grade:probability pairs), "
                         f"which rpdi eval, compare and simulate read; experiment configs do not yet")
    runs = []
    for pattern in data.runs:
        found = sorted(glob.glob(os.path.join(base, pattern)))
        if not found:
            raise InputError(f"{path}: data.runs: no file matches {pattern!r}")
        runs += found
    data.qrels, data.runs = qrels, runs
    if data.intents is not None:
        data.intents = os.path.join(base, data.intents)
        if not os.path.isfile(data.intents):
            raise InputError(f"{path}: data.intents: no such file: {data.intents}")
    if data.sessions not in (None, CAST_SESSIONS):
        data.sessions = os.path.join(base, data.sessions)
        if not os.path.isfile(data.sessions):
            raise InputError(f"{path}: data.sessions: no such file: {data.sessions} (or \"{CAST_SESSIONS}\": the "
                             f"qrels' CAsT topic ids)")
    if config.compare is not None and config.compare.baseline is not None:
        from rpdi.metrics.trec import run_name

        names = [run_name(r) for r in runs]
        if config.compare.baseline not in names:
            raise InputError(f"{path}: compare.baseline: {config.compare.baseline!r} is not one of the runs "
                             f"({', '.join(names)})")
