"""The public ``simulate()``: closed form, exact expectation and simulated users side by side, with the verdict."""

from __future__ import annotations

from functools import partial
from typing import Iterable

from rpdi.metrics.errors import InputError
from rpdi.metrics.diversity import diversity_rankings
from rpdi.metrics.evaluate import loaded, load_runs
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.records import records_frame
from rpdi.metrics.sessions import check_session_call, given_sessions, session_rankings, session_width
from rpdi.metrics.tie_scores import check_ties
from rpdi.metrics.uncertain import UncertainQrels
from rpdi.metrics.uncertain_eval import is_uncertain, judgments
from rpdi.simulate.confirm import confirmation
from rpdi.simulate.exact_checks import reading_cells
from rpdi.simulate.settings import check_settings
from rpdi.simulate.runs import simulate_runs
from rpdi.simulate.three_way import three_way
from rpdi.simulate.verdict import ALPHA, verdict
from rpdi.simulate.worlds import simulate_worlds
from rpdi.usermodels import BrowsingModel, measure_list, model_for


def collection_rankings(qrels, runs, topics: str, diversity: bool, intents=None):
    """(qrels, runs, rankings): with ``diversity`` diversity qrels and rankings with their
    subtopics and ``intents``' P(i|q) (:func:`metrics.diversity.diversity_rankings`), as the
    users of alpha-nDCG and X-IA read them; else plain ones (``intents`` then refused)."""
    qrels, intents = loaded(qrels, diversity, "trec_eval", intents)
    runs = load_runs(runs)
    return qrels, runs, rankings_of(qrels, runs, topics, diversity, intents)


def rankings_of(qrels, runs, topics: str, diversity: bool, intents=None):
    """:func:`collection_rankings`'s rankings of ``runs`` (:class:`~metrics.trec.Run` objects) on
    qrels and intents already read (:func:`metrics.evaluate.loaded`)."""
    if diversity:
        return diversity_rankings(qrels, runs, topics, intents=intents)
    return build_rankings(qrels, runs, topics)


def simulate(qrels, runs, measures: Iterable[str | BrowsingModel | type[BrowsingModel]], *,
             users: int = 10_000, seed: int = 0, engine: str = "vector", per_topic: bool = False,
             convention: str = "unknown", topics: str = "qrels", target_stderr: float | None = None,
             max_users: int = 10_000_000, progress: bool = False, alpha: float = ALPHA,
             with_verdict: bool = False, force: bool = False, intents=None, ties: str = "trec_eval",
             sessions=None, as_frame: bool = False):
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
    gives P(i|q), as in :func:`metrics.evaluate.evaluate`. With ``ties="expected"`` every model's
    user reads each group of tied documents in a random order (:class:`usermodels.tie_orders.TieOrders`,
    orders sampled with ``seed`` where a ranking has too many): the closed form is the expectation over
    orders, each simulated user draws an order (a model that reads no tie anywhere is simulated as
    without ``ties``, number for number; in a collection with ties, its rankings without any draw
    from the mixture's streams), and every record has ``population_rate``, for a rate
    aggregation the rate of the whole population whose orders are random (sum E[G] / sum E[N] over
    orders) beside ``exact``, the mean over orders of each order's rate (None otherwise). Qrels
    with grade distributions are simulated over judgment worlds
    (:func:`simulate.worlds.simulate_worlds`). Session measures (sRBP, sDCG, a session user of
    one's own) are simulated over ``sessions`` by :func:`simulate_sessions`; not with single-query
    measures in the same call. ``qrels`` and ``runs`` are anything :func:`metrics.evaluate.evaluate`
    takes (paths, DataFrames, dicts); with ``as_frame`` the records are a pandas DataFrame with
    typed columns (:func:`metrics.records.records_frame`). Run files are read, ranked and compared
    a batch at a time (:mod:`simulate.runs`; but for ``ties="expected"``, sessions and judgment
    worlds), the records and verdict those of all runs at once.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    >>> run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> frame = simulate(qrels, run, ["RBP(p=0.8)"], users=0, as_frame=True)
    >>> frame[["run", "measure", "closed_form", "exact"]].round(9)
       run     measure  closed_form  exact
    0  run  RBP(p=0.8)          0.2    0.2
    """
    return _framed(_simulate(qrels, runs, measures, users=users, seed=seed, engine=engine, per_topic=per_topic,
                             convention=convention, topics=topics, target_stderr=target_stderr,
                             max_users=max_users, progress=progress, alpha=alpha, with_verdict=with_verdict,
                             force=force, intents=intents, ties=ties, sessions=sessions), as_frame)


def _framed(result, as_frame: bool):
    """The records (of (records, verdict)) as a typed DataFrame with ``as_frame``."""
    if not as_frame:
        return result
    if isinstance(result, tuple):
        return (records_frame(result[0]),) + result[1:]
    return records_frame(result)


def _simulate(qrels, runs, measures, *, users, seed, engine, per_topic, convention, topics, target_stderr,
              max_users, progress, alpha, with_verdict, force, intents, ties, sessions):
    """:func:`simulate` as records."""
    check_settings(dict(users=users, seed=seed, engine=engine, convention=convention, topics=topics,
                        target_stderr=target_stderr, max_users=max_users, force=force))
    if not 0 < alpha < 1:
        raise InputError(f"alpha: must be between 0 and 1, not {alpha}")
    check_ties(ties, ("trec_eval", "expected"), "ties (simulate)")
    measures = measure_list(measures)
    models = [model_for(m) for m in measures]
    uncertain = is_uncertain(qrels) and isinstance(judgments(qrels), UncertainQrels)
    if check_session_call([m.measure for m in models], sessions, ties, intents=intents):
        if uncertain:
            raise InputError("session measures: not with uncertain grades yet")
        return simulate_sessions(qrels, runs, models, sessions, users=users, seed=seed, engine=engine,
                                 per_topic=per_topic, convention=convention, topics=topics,
                                 target_stderr=target_stderr, max_users=max_users, progress=progress,
                                 alpha=alpha, with_verdict=with_verdict, force=force)
    if uncertain:  # over judgment worlds
        if intents is not None:
            raise InputError("intents: not with uncertain grades (diversity qrels have no grade distributions yet)")
        if ties != "trec_eval":
            raise InputError(f"ties {ties}: not with uncertain grades yet")
        records, checked = simulate_worlds(qrels, runs, measures, users=users, seed=seed, engine=engine,
                                           per_topic=per_topic, convention=convention, topics=topics,
                                           target_stderr=target_stderr, max_users=max_users, progress=progress,
                                           alpha=alpha, force=force)
        return (records, checked) if with_verdict else records
    diversity = any(m.measure.spec.intents for m in models)
    qrels, intents = loaded(qrels, diversity, "trec_eval", intents)
    rank = partial(rankings_of, qrels, topics=topics, diversity=diversity, intents=intents)
    records, cells, confirm = simulate_runs(
        qrels, runs, models, rank, ties=ties, users=users, seed=seed, engine=engine, per_topic=per_topic,
        convention=convention, target_stderr=target_stderr, max_users=max_users, progress=progress, force=force)
    return (records, verdict(cells, alpha, confirm)) if with_verdict else records


def simulate_sessions(qrels, runs, measures, sessions=None, *, users: int = 10_000, seed: int = 0,
                      engine: str = "vector", per_topic: bool = False, convention: str = "unknown",
                      topics: str = "qrels", target_stderr: float | None = None, max_users: int = 10_000_000,
                      progress: bool = False, alpha: float = ALPHA, with_verdict: bool = False, force: bool = False):
    """:func:`simulate` of session measures (sRBP, sDCG, a session user of one's own) over
    sessions: ``sessions`` a session file, a :class:`metrics.sessions.Sessions`, or None (the
    qrels' topic ids as CAsT's SESSION_TURN). The records' ``topic`` is the session; a mean is
    over sessions. Each measure reads its sessions laid out at its cutoff (else the longest
    ranking) per turn."""

    check_settings(dict(users=users, seed=seed, engine=engine, convention=convention, topics=topics,
                        target_stderr=target_stderr, max_users=max_users, force=force))
    if not 0 < alpha < 1:
        raise InputError(f"alpha: must be between 0 and 1, not {alpha}")
    models = [model_for(m) for m in measures]
    qrels, runs, rankings = collection_rankings(qrels, runs, topics, False)
    sessions = given_sessions(sessions, rankings.topics, runs)
    records, cells, laid_out, by_measure = [], reading_cells(qrels, runs, rankings), {}, {}
    for model in models:
        width = session_width(model.measure, rankings)
        if width not in laid_out:
            laid_out[width] = session_rankings(rankings, sessions, width)
        recs, (ex,), model_cells = three_way(
            laid_out[width], [model], users=users, seed=seed, engine=engine, per_topic=per_topic,
            convention=convention, target_stderr=target_stderr, max_users=max_users, progress=progress, force=force)
        records += recs
        cells += model_cells
        by_measure[model.measure.text] = (model, laid_out[width], ex)  # the confirmation reuses them
    if not with_verdict:
        return records

    def confirm(cell):
        model, laid, ex = by_measure[cell.measure]
        return confirmation(laid, model, ex, cell, seed=seed, convention=convention)

    return records, verdict(cells, alpha, confirm)
