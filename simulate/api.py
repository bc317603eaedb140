"""The public ``simulate()``: closed form, exact expectation and simulated users side by side, with the verdict."""

from __future__ import annotations

from typing import Iterable

from rpdi.metrics.errors import InputError
from rpdi.metrics.diversity import diversity_rankings
from rpdi.metrics.evaluate import load_diversity_qrels, load_intents, load_qrels, load_runs
from rpdi.metrics.rankings import build_rankings
from rpdi.simulate.confirm import confirmation
from rpdi.simulate.exact_checks import reading_cells
from rpdi.simulate.settings import check_settings
from rpdi.simulate.three_way import three_way
from rpdi.simulate.verdict import ALPHA, verdict
from rpdi.usermodels import BrowsingModel, exact, model_for


def collection_rankings(qrels, runs, topics: str, diversity: bool, intents=None):
    """(qrels, runs, rankings): with ``diversity`` diversity qrels and rankings with their
    subtopics and ``intents``' P(i|q) (:func:`metrics.diversity.diversity_rankings`), as the
    users of alpha-nDCG and X-IA read them; else plain ones (``intents`` then refused)."""
    if not diversity:
        if intents is not None:
            raise InputError("intents: given, but no diversity or intent-aware measure (X-IA) reads them")
        qrels, runs = load_qrels(qrels), load_runs(runs)
        return qrels, runs, build_rankings(qrels, runs, topics)
    qrels, runs = load_diversity_qrels(qrels), load_runs(runs)
    return qrels, runs, diversity_rankings(qrels, runs, topics, intents=load_intents(intents))


def simulate(qrels, runs, measures: Iterable[str | BrowsingModel | type[BrowsingModel]], *,
             users: int = 10_000, seed: int = 0, engine: str = "vector", per_topic: bool = False,
             convention: str = "unknown", topics: str = "qrels", target_stderr: float | None = None,
             max_users: int = 10_000_000, progress: bool = False, alpha: float = ALPHA,
             with_verdict: bool = False, force: bool = False, intents=None):
    """Closed form, exact expectation and simulation side by side for each measure (a name, a
    model of one's own by file or module, or a BrowsingModel class or instance); a list of flat records
    ``{"run", "topic", "measure", "aggregation", "closed_form", "exact", "estimate", "stderr",
    "z", "users"}``, one per (run, topic) with ``per_topic`` and one per (run, measure) with
    topic ``"all"`` (means over topics; the stderr of a mean of independent estimates).
    ``users=0`` skips sampling. stderr is the standard error of the estimate under the model
    (see :func:`simulate.sample.model_stderr`; rate by the delta method), z = (estimate - exact) / stderr, null
    where stderr is 0: the model's outcome does not vary, and estimate and exact must be equal.
    Undefined values (R = 0) are null and left out of means. With ``with_verdict`` it returns
    (records, :func:`simulate.verdict.verdict` of every comparison at family-wise error rate ``alpha``). Settings are
    validated as on the command line (:mod:`simulate.settings`); a simulation estimated beyond
    :data:`simulate.work.TIME_LIMIT` seconds of work is refused unless ``force``. With a diversity
    or intent-aware measure (alpha-nDCG, X-IA) the qrels are diversity qrels and ``intents``
    gives P(i|q), as in :func:`metrics.evaluate.evaluate`."""
    check_settings(dict(users=users, seed=seed, engine=engine, convention=convention, topics=topics,
                        target_stderr=target_stderr, max_users=max_users, force=force))
    if not 0 < alpha < 1:
        raise InputError(f"alpha: must be between 0 and 1, not {alpha}")
    models = [model_for(m) for m in measures]
    diversity = any(m.measure.spec.intents for m in models)
    qrels, runs, rankings = collection_rankings(qrels, runs, topics, diversity, intents)
    records, expectations, cells = three_way(
        rankings, models, users=users, seed=seed, engine=engine, per_topic=per_topic, convention=convention,
        target_stderr=target_stderr, max_users=max_users, progress=progress, force=force)
    cells += reading_cells(getattr(qrels, "topic_qrels", lambda: qrels)(), runs, rankings)
    if not with_verdict:
        return records
    by_measure = {m.measure.text: (m, ex) for m, ex in zip(models, expectations)}

    def confirm(cell):
        model, ex = by_measure[cell.measure]
        return confirmation(rankings, model, ex, cell, seed=seed, convention=convention)

    return records, verdict(cells, alpha, confirm)


def simulate_sessions(qrels, runs, measures, sessions=None, *, users: int = 10_000, seed: int = 0,
                      engine: str = "vector", per_topic: bool = False, convention: str = "unknown",
                      topics: str = "qrels", target_stderr: float | None = None, max_users: int = 10_000_000,
                      progress: bool = False, alpha: float = ALPHA, with_verdict: bool = False, force: bool = False):
    """:func:`simulate` of session measures (sRBP, sDCG, a session user of one's own) over
    sessions: ``sessions`` a session file, a :class:`metrics.sessions.Sessions`, or None (the
    qrels' topic ids as CAsT's SESSION_TURN). The records' ``topic`` is the session; a mean is
    over sessions. Each measure reads its sessions laid out at its cutoff (else the longest
    ranking) per turn."""
    from rpdi.metrics.sessions import Sessions, read_sessions, session_rankings, session_width, sessions_from_ids

    check_settings(dict(users=users, seed=seed, engine=engine, convention=convention, topics=topics,
                        target_stderr=target_stderr, max_users=max_users, force=force))
    if not 0 < alpha < 1:
        raise InputError(f"alpha: must be between 0 and 1, not {alpha}")
    models = [model_for(m) for m in measures]
    qrels, runs, rankings = collection_rankings(qrels, runs, topics, False)
    if sessions is None:
        sessions = sessions_from_ids(rankings.topics)
    elif not isinstance(sessions, Sessions):
        sessions = read_sessions(sessions)
    records, cells, laid_out = [], reading_cells(qrels, runs, rankings), {}
    for model in models:
        width = session_width(model.measure, rankings)
        if width not in laid_out:
            laid_out[width] = session_rankings(rankings, sessions, width)
        recs, _, model_cells = three_way(
            laid_out[width], [model], users=users, seed=seed, engine=engine, per_topic=per_topic,
            convention=convention, target_stderr=target_stderr, max_users=max_users, progress=progress, force=force)
        records += recs
        cells += model_cells
    if not with_verdict:
        return records
    by_measure = {m.measure.text: m for m in models}

    def confirm(cell):
        model = by_measure[cell.measure]
        laid = laid_out[session_width(model.measure, rankings)]
        return confirmation(laid, model, exact(model, laid, convention), cell, seed=seed, convention=convention)

    return records, verdict(cells, alpha, confirm)
