"""``rpdi compare``: is run B really better than run A, and what do their users experience?

:func:`compare` scores the runs with closed-form measures, tests every pair (or every run
against a baseline) with :mod:`metrics.significance`, and with ``users`` adds, per browsing
model, the probability that a user of B fares better than a user of A on the same topic
(:mod:`simulate.experience`); :func:`experiments.formats.compare_table` shows them as IR papers do.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from rpdi.choices import CORRECTIONS, INTERVALS, TESTS
from rpdi.experiments.compare_users import (INTENT_FIELDS, USER_FIELDS, check_user_work, intent_preferences,
                                            intent_probabilities, user_preferences)
from rpdi.experiments.formats import unit_name
from rpdi.experiments.run_scores import run_scores
from rpdi.metrics.evaluate import compute, expand
from rpdi.metrics.run_files import item_name, run_items
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.names import parse_measure
from rpdi.metrics.records import records_frame
from rpdi.metrics.significance import FIELDS as PAIR_FIELDS
from rpdi.metrics.tie_scores import check_ties, tie_scores
from rpdi.metrics.significance import compare_scores, discriminative_power
from rpdi.metrics.ties import paths_text
from rpdi.metrics.sessions import check_session_call, given_sessions, session_rankings, session_width
from rpdi.metrics.errors import InputError
from rpdi.metrics.uncertain import UncertainQrels
from rpdi.metrics.uncertain_eval import is_uncertain, judgments
from rpdi.metrics.view import View
from rpdi.simulate.api import collection_rankings
from rpdi.usermodels import measure_list, model_for, resolve

FIELDS = PAIR_FIELDS + ("method",)  # method: the values compared are closed forms, or exact expectations


def check_options(test: str, correction: str, alpha: float, resamples: int, interval: str | None,
                  level: float) -> None:
    """InputError naming the first bad option."""
    for name, value, allowed in (("test", test, TESTS), ("correction", correction, CORRECTIONS),
                                 ("interval", interval or "t", INTERVALS)):
        if value not in allowed:
            raise InputError(f"{name}: expected one of {', '.join(allowed)}, not {value!r}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha: must be in (0, 1), not {alpha}")
    if not 0 < level < 1:
        raise InputError(f"level: must be in (0, 1), not {level}")
    if resamples < 1:
        raise InputError(f"resamples: must be >= 1, not {resamples}")


def compare(qrels, runs, measures: Iterable[str | Measure], *, baseline: str | None = None,
            test: str = "randomization", correction: str = "holm", alpha: float = 0.05,
            resamples: int = 10_000, seed: int = 0, interval: str | None = None, level: float = 0.95,
            topics: str = "qrels", users: int | None = None, convention: str = "unknown",
            force: bool = False, as_frame: bool = False, intents=None, by_intent: bool = False,
            ties: str = "trec_eval", sessions=None, every: bool = False):
    """Compare runs pairwise on each measure; records with the fields of
    :data:`FIELDS` (with ``as_frame`` a pandas DataFrame with typed columns,
    :func:`metrics.records.records_frame`): ``method`` says whether the values compared
    are closed forms or, for a model with none, exact expectations.

    Pairs are all pairs in the order given (``diff`` = mean of the later run minus the earlier)
    or, with ``baseline``, each other run against it. ``test``: t, wilcoxon, randomization
    (default; ``resamples`` sign flips, all 2^T when fewer) or bootstrap; ``correction`` over
    each measure's pairs: holm (default), bonferroni, tukey or none; ``interval`` for the
    difference: t, percentile or bca (default: t for the t-test, else bca). Topics are those
    every run takes part in (``topics`` as in :func:`metrics.evaluate`; undefined values 0).
    With ``users`` (simulated users per ranking where the outcome distribution is not finite;
    0: exact only) each record also has :data:`USER_FIELDS`; simulation that would take too long
    is refused beforehand as in :func:`rpdi.simulate` unless ``force``. Diversity and
    intent-aware measures read the qrels as diversity qrels, with ``intents`` (P(i|q)) as in
    :func:`metrics.evaluate.evaluate`; with ``by_intent`` the result is (records, per-intent
    records: :func:`intent_preferences`, for the intent-aware measures' users); with ``every``
    the result ends with the records of every pair too, from the same values (what
    :func:`discriminative_power` reads: with a ``baseline``, the pairs of the other runs too).
    ``ties="expected"`` compares each topic's expectation over uniformly random orders of the
    tied documents (:mod:`metrics.tie_scores`), ``"range"`` compares trec_eval's order's values
    and adds ``diff_low`` and ``diff_high``, the lowest and highest mean difference over the
    orders of both runs' ties (each topic's low_b - high_a and high_b - low_a: the two runs'
    orders are independent); the records say how in ``ties`` (:data:`TIE_FIELDS`). Not with
    ``users`` yet. Qrels with grade distributions are compared on the most probable grades and
    over judgment worlds (:func:`experiments.compare_worlds.compare`), not with ``ties`` or
    ``every`` yet.
    Session measures (sRBP, sDCG) compare runs over ``sessions`` (as in
    :func:`metrics.evaluate.evaluate`), each session one observation: the sessions every run
    takes part in; not with single-query measures in the same call. The runs are read, ranked
    and scored a batch at a time, only their per-topic values kept
    (:func:`experiments.run_scores.run_scores`), but with ``users`` or session measures all at
    once: the users' outcomes are found exactly or simulated for all rankings alike, and a
    session is laid out at the longest ranking of all runs.

    >>> from rpdi.experiments.compare import compare
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    >>> runs = {"a": {q: {"x": 2.0, d: 1.0} for q, d in zip(qrels, ["d1", "d2", "d3"])},
    ...         "b": {q: {d: 2.0, "x": 1.0} for q, d in zip(qrels, ["d1", "d2", "d3"])}}
    >>> r, = compare(qrels, runs, ["RR"], users=0)
    >>> r["diff"], r["p"], r["user_b_better"]  # 2 of the 8 sign flips are as extreme
    (0.5, 0.25, 1.0)
    >>> compare(qrels, runs, ["RR"], as_frame=True)[["run_a", "run_b", "diff", "p"]]
      run_a run_b  diff     p
    0     a     b   0.5  0.25
    """
    check_options(test, correction, alpha, resamples, interval, level)
    check_ties(ties)
    measures = measure_list(measures)
    if ties != "trec_eval" and users is not None:
        raise InputError(f"users: not given with ties {ties} yet (the users' preference reads trec_eval's order)")
    if is_uncertain(qrels) and isinstance(judgments(qrels), UncertainQrels):  # over judgment worlds too
        if ties != "trec_eval" or every:
            raise InputError(f"{'every' if every else f'ties {ties}'}: not with uncertain grades yet")
        from rpdi.experiments.compare_worlds import compare as compare_worlds

        records = compare_worlds(qrels, runs, measures, baseline=baseline, test=test, correction=correction,
                                 alpha=alpha, resamples=resamples, seed=seed, interval=interval, level=level,
                                 topics=topics, users=users)
        return records_frame(records) if as_frame else records
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in map(resolve, measures)]
    if not parsed:
        raise InputError("no measure given")
    for m in parsed:
        if m.spec.between_runs:
            raise InputError(f"measure {m.text!r}: scores a run against the first run given, not a run on "
                             f"its own; it cannot be compared between runs")
    session = check_session_call(parsed, sessions, ties, intents=intents)
    diversity = any(x.spec.intents for x in expand(parsed))
    runs = run_items(runs)  # files not read yet: their names are checked before any run is read
    _check_names([item_name(r) for r in runs], baseline)
    if session or users is not None:  # sessions and the users' preference read all runs' rankings at once
        read, scores = _whole(qrels, runs, parsed, topics, diversity, intents, sessions)
        names, tied = list(next(iter(read.values())).runs), [None] * len(parsed)
        present = {text: r.present for text, r in read.items()}
    else:  # the runs read, ranked and scored a batch at a time, only their per-topic values kept
        found = run_scores(qrels, runs, parsed, topics, diversity, intents, ties)
        names, scores, tied = list(found.runs), found.scores, found.ties
        read, present = {}, {m.text: found.present for m in parsed}
    common = {text: np.flatnonzero(p.all(0)) for text, p in present.items()}
    if min(c.size for c in common.values()) < 2:
        raise InputError(f"fewer than two {unit_name(session)} common to all runs")
    options = dict(baseline=baseline, test=test, correction=correction, alpha=alpha,
                   resamples=resamples, seed=seed, interval=interval, level=level)
    values = [(m, score, tie, common[m.text]) for m, score, tie in zip(parsed, scores, tied)]
    if users:  # each measure's users on the rankings it reads (all the same ones but for sessions')
        for on in {id(r): r for r in read.values()}.values():
            check_user_work([model for m, model in zip(parsed, map(_model, parsed))
                             if model is not None and read[m.text] is on], on, users, convention, force)
    records, per_intent = [], []
    for m, score, tie, where in values:
        recs = _pairs(m, score, tie, where, names, options)
        if users is not None:
            on = read[m.text]
            fields, by_variant = user_preferences(_model(m), on, where, users, convention, options)
            for r, extra in zip(recs, fields):
                r.update(extra)
            if by_variant is not None:
                per_intent += intent_preferences(m.text, by_variant, intent_probabilities(m, on)[where],
                                                 names, options)
        records += recs
    out = [in_units(records, session)] + ([per_intent] if by_intent else [])
    if every:  # every pair, from the same values (without a baseline: the records)
        out.append(out[0] if baseline is None else in_units(
            [r for v in values for r in _pairs(*v, names, dict(options, baseline=None))], session))
    if as_frame:
        out = list(map(records_frame, out))
    return tuple(out) if len(out) > 1 else out[0]


def _check_names(names: list[str], baseline: str | None) -> None:
    """InputError for fewer than two runs, or a baseline not among them."""
    if len(names) < 2:
        raise InputError("compare needs two or more runs")
    if baseline is not None and baseline not in names:
        raise InputError(f"baseline {baseline!r}: not one of the runs ({', '.join(names)})")


def _whole(qrels, runs, parsed: list[Measure], topics: str, diversity: bool, intents, sessions) -> tuple[dict, list]:
    """Per measure, the rankings of all runs it reads, read at once (a session measure's: its
    sessions' turns end to end), and the measures' :class:`~metrics.view.Score` on them, in
    trec_eval's order (ties are refused with sessions and users)."""
    _, loaded, rankings = collection_rankings(qrels, runs, topics, diversity, intents)
    if not any(m.spec.session for m in parsed):
        return {m.text: rankings for m in parsed}, compute(rankings, parsed)
    found = given_sessions(sessions, rankings.topics, loaded)
    read = {m.text: session_rankings(rankings, found, session_width(m, rankings)) for m in parsed}
    return read, [m.compute(View(read[m.text])) for m in parsed]


def _pairs(m: Measure, score, tie, where: np.ndarray, names: list[str], options: dict) -> list[dict]:
    """The pair records of one measure's values (``tie``'s under ``ties``) on the topics ``where``."""
    X = np.nan_to_num((score if tie is None else tie.score).value[:, where])
    return [r | {"method": m.spec.method} | _tie_fields(tie, names, where, r)
            for r in compare_scores(X, names, m.text, **options)]


def in_units(records: list[dict], session: bool) -> list[dict]:
    """Pair records whose count of observations is named for what they are: ``sessions`` for
    session measures (each session one observation), else ``topics`` as given."""
    if not session:
        return records
    return [{(unit_name(True) if key == unit_name(False) else key): value for key, value in r.items()}
            for r in records]


def unit_fields(fields: tuple[str, ...], session: bool) -> tuple[str, ...]:
    """The output fields of pair records (:func:`in_units`): ``sessions`` in place of ``topics``."""
    return tuple(unit_name(session) if f == unit_name(False) else f for f in fields)


# what ties="expected" and "range" add to a pair's record (see compare)
TIE_FIELDS = {"expected": ("ties",), "range": ("diff_low", "diff_high", "ties")}


def _tie_fields(tie, names: list[str], common: np.ndarray, record: dict) -> dict:
    """A pair's fields under ``ties``: how the values were found over both runs' common topics
    and, for a range, the lowest and highest mean difference (B - A) over the tie orders."""
    if tie is None:
        return {}
    a, b = names.index(record["run_a"]), names.index(record["run_b"])
    fields = {"ties": paths_text(tie.path[[a, b]][:, common])}
    if tie.how == "range":
        low, high = np.nan_to_num(tie.low[:, common]), np.nan_to_num(tie.high[:, common])
        fields = {"diff_low": float((low[b] - high[a]).mean()), "diff_high": float((high[b] - low[a]).mean())} | fields
    return fields


def _model(m: Measure):
    """The measure's browsing model, None if it has none."""
    try:
        return model_for(m)
    except InputError:
        return None


POWER_FIELDS = ("measure", "pairs", "significant", "alpha", "discriminative_power")


def _config_ties(ties: str, rankings, measures) -> dict:
    """{measure: :class:`metrics.tie_scores.TieScore`} of a config's ``[compare] ties`` (none for
    trec_eval's order), each measure by its user's declaration."""
    if ties == "trec_eval":
        return {}
    parsed = [model_for(m).measure for m in measures]
    return dict(zip(measures, tie_scores(rankings, parsed, ties, "trec_eval", None, compute(rankings, parsed))))


def report_section(out_dir: str, config, records: list[dict], data: tuple) -> tuple[str, list[str]]:
    """An experiment's ``[compare]``: the pairs on every measure, from the per-topic closed-form
    values of the three-way records (the exact expectation where a model has no closed form),
    on the topics every run has; ``data`` is the experiment's (qrels, runs). Writes
    ``compare.csv``/``compare.json`` (the pair records), ``discriminative_power.csv``/``.json``
    and, with plots, ``plots/forest.png`` and ``plots/asl.png``; returns the Markdown section and
    the plots written. With ``users`` set, the pairs also have the users' P(B better)
    (:func:`compare`'s ``users``)."""
    import os

    from rpdi.experiments import compare_plots
    from rpdi.experiments.formats import compare_table, compare_tie_table, power_table, to_csv, to_json
    from rpdi.experiments.store import write_atomic

    c = config.compare
    per: dict[str, dict[str, dict[str, float]]] = {}
    method = {}
    for r in records:
        value = r["closed_form"] if r["closed_form"] is not None else r["exact"]
        if r["topic"] != "all":
            per.setdefault(r["measure"], {}).setdefault(r["run"], {})[r["topic"]] = value
            method.setdefault(r["measure"], "closed_form" if r["closed_form"] is not None else "exact")
    pairs, power = [], []
    read = dict.fromkeys(per)  # the rankings each measure reads, where the users or the tie orders need them
    if c.users is not None or c.ties != "trec_eval":
        from rpdi.experiments.session_data import measure_rankings
        from rpdi.experiments.tasks import data_source, source_rankings

        source, topics = data_source(config), config.experiment.topics
        if "sessions" in source:  # each measure's sessions laid out at its cutoff
            read = {m: measure_rankings(source, data[1], topics, model_for(m).measure) for m in per}
        else:
            read = dict.fromkeys(per, source_rankings(source, data[1], topics))
    if c.users is not None:
        for on in {id(r): r for r in read.values()}.values():
            check_user_work([model_for(m) for m in per if read[m] is on], on, c.users, config.experiment.convention,
                             config.experiment.force)
    tied = _config_ties(c.ties, next(iter(read.values()), None), per)
    for measure, by_run in per.items():
        rankings = read[measure]
        runs = list(by_run) if rankings is None else [r for r in rankings.runs if r in by_run]
        if c.baseline is not None and c.baseline not in runs:
            raise InputError(f"compare.baseline: {c.baseline!r} is not one of the runs ({', '.join(runs)})")
        topics = sorted(set.intersection(*(set(v) for v in by_run.values())))
        if len(runs) < 2 or len(topics) < 2:
            continue
        X = np.nan_to_num(np.array([[np.nan if by_run[r][t] is None else by_run[r][t] for t in topics]
                                    for r in runs], dtype=float))
        tie = tied.get(measure)
        if tie is not None:  # the same runs and topics, valued over the tie orders
            index = {str(t): i for i, t in enumerate(rankings.topics)}
            rows = [list(rankings.runs).index(r) for r in runs]
            X = np.nan_to_num(tie.score.value[rows][:, [index[t] for t in topics]])
        options = dict(test=c.test, correction=c.correction, alpha=c.alpha, resamples=c.resamples,
                       seed=config.experiment.seed, interval=c.interval)
        recs = [r | {"method": method[measure]}
                for r in compare_scores(X, runs, measure, baseline=c.baseline, **options)]
        if tie is not None:
            common = np.array([index[t] for t in topics])
            recs = [r | _tie_fields(tie, list(rankings.runs), common, r) for r in recs]
        if c.users is not None:
            index = {str(t): i for i, t in enumerate(rankings.topics)}
            common = np.array([index[t] for t in topics])
            fields, _ = user_preferences(model_for(measure), rankings, common, c.users, config.experiment.convention,
                               dict(options, baseline=c.baseline))
            for r, extra in zip(recs, fields):
                r.update(extra)
        pairs += recs
        if c.discriminative_power:
            every = pairs if c.baseline is None else compare_scores(X, runs, measure, **options)
            power += discriminative_power([r for r in every if r["measure"] == measure], c.alpha)
    session = config.data.sessions is not None
    if not pairs:
        return f"Comparing systems needs two or more runs with two or more common {unit_name(session)}.\n", []
    pairs = in_units(pairs, session)
    fields = unit_fields(FIELDS + (USER_FIELDS if c.users is not None else ()) + TIE_FIELDS.get(c.ties, ()), session)
    write_atomic(os.path.join(out_dir, "compare.csv"), to_csv(pairs, fields))
    write_atomic(os.path.join(out_dir, "compare.json"), to_json(pairs))
    text = (f"{c.test} test, {c.correction} correction, alpha {c.alpha:g}, seed {config.experiment.seed} "
            f"(compare.csv, compare.json)\n\n```\n{compare_table(pairs, c.alpha, c.baseline)}"
            f"{compare_tie_table(pairs)}```\n")
    written = []
    what = f"{c.test} test, {c.correction} correction"
    if config.output.plots:
        written += compare_plots.forest(pairs, os.path.join(out_dir, "plots", "forest.png"), what)
    if power:
        write_atomic(os.path.join(out_dir, "discriminative_power.csv"), to_csv(power, POWER_FIELDS))
        write_atomic(os.path.join(out_dir, "discriminative_power.json"), to_json(power))
        text += f"\n### Discriminative power (Sakai 2006)\n\n```\n{power_table(power)}```\n"
        if config.output.plots:
            written += compare_plots.asl_curves(power, os.path.join(out_dir, "plots", "asl.png"),
                                                f"{c.test} test")
    return text, written


__all__ = ["compare", "intent_preferences", "report_section", "discriminative_power", "in_units", "unit_fields", "FIELDS",
           "USER_FIELDS", "POWER_FIELDS", "INTENT_FIELDS"]
