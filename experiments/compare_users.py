"""The users' preference in ``rpdi compare``: per pair of runs, the probability that a user of B
fares better than a user of A on the same topic (:mod:`simulate.experience`), per browsing model,
and per intent for a mixture's users (:func:`intent_preferences`); what :func:`experiments.compare.compare`
adds to its records with ``users``.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.measures.registry import Measure
from rpdi.metrics.seeds import stream
from rpdi.metrics.significance import bootstrap_interval, compare_scores, pairs_of, t_interval
from rpdi.metrics.view import View
from rpdi.usermodels import model_for

USER_FIELDS = ("user_outcome", "user_b_better", "user_ci_low", "user_ci_high", "user_method")

INTENT_FIELDS = ("measure", "intent", "probability", "topics", "run_a", "run_b", "user_b_better", "ci_low",
                 "ci_high", "p", "p_adjusted", "significant")


def intent_preferences(measure: str, pi: np.ndarray, probability: np.ndarray, runs, options: dict) -> list[dict]:
    """Per intent, which run's users fare better: for the j-th most likely intent of each topic
    (j = 1: the majority intent; ties in ndeval's subtopic order), over the topics that have one,
    the mean of pi_tj = P(a user of B with that intent fares better than one of A with it, ties
    half), its interval and p-value for "no preference" (1/2) by the comparison's test, corrected
    over the pairs (per intent); ``probability`` the mean P(i_j|q). ``pi`` is (pairs, topics, I)
    (:func:`simulate.experience.preferences`), ``probability`` (topics, I) P(i|q)."""
    pairs = pairs_of(runs, options["baseline"])
    order = np.argsort(-probability, axis=1, kind="stable")  # each topic's intents, most likely first
    out = []
    for j in range(probability.shape[1]):
        slot = order[:, j]
        has = probability[np.arange(len(slot)), slot] > 0
        if has.sum() < 2:
            continue
        rows = pi[:, has, slot[has]]  # (pairs, topics with a j-th intent)
        labels = ["no preference"] + [f"{runs[b]} vs {runs[a]}" for a, b in pairs]
        X = np.vstack([np.full(has.sum(), 0.5), rows])
        tests = compare_scores(X, labels, f"{measure} intent {j + 1}",
                               **dict(options, baseline="no preference"))
        for (a, b), r in zip(pairs, tests):
            out.append({"measure": measure, "intent": j + 1,
                        "probability": float(probability[np.flatnonzero(has), slot[has]].mean()),
                        "topics": int(has.sum()), "run_a": runs[a], "run_b": runs[b], "user_b_better": r["mean_b"],
                        "ci_low": 0.5 + r["ci_low"], "ci_high": 0.5 + r["ci_high"], "p": r["p"],
                        "p_adjusted": r["p_adjusted"], "significant": r["significant"]})
    return out


def intent_probabilities(m: Measure, rankings) -> np.ndarray:
    """(T, I) the P(i|q) the measure's users draw intents from."""
    model = model_for(m)
    return rankings.intents.probabilities(model.inner.measure.params.get("rel"))


def check_user_work(models, rankings, users: int, convention: str, force: bool) -> None:
    """Refuse, before any user is simulated, what would take too long (as rpdi simulate does):
    the users of every ranking whose outcome distribution is not finite, times E[N] there."""
    from rpdi.simulate.experience import finite_outcomes
    from rpdi.simulate.work import check_work, steps
    from rpdi.usermodels import exact

    simulated = [exact(model, rankings, convention) for model in models if not finite_outcomes(model)]
    check_work(steps(simulated, rankings.present, users, None, users), "vector", force)


def user_preferences(model, rankings, common, users: int, convention: str, options) -> tuple[list[dict], np.ndarray | None]:
    """The user-experience fields of every pair (of ``options["baseline"]`` or all) of one
    measure's browsing model on the topics ``common`` (all None without a model), and for a
    mixture's users (X-IA's) the preference per variant (:func:`simulate.experience.preferences`)."""
    from rpdi.simulate.experience import preferences
    from rpdi.simulate.ranking import rankings_for

    pairs = pairs_of(rankings.runs, options["baseline"])
    if model is None:
        return [dict.fromkeys(USER_FIELDS) for _ in pairs], None
    rows = rankings_for(model, View(rankings, model.k), convention)
    seed, level = options["seed"], options.get("level", 0.95)
    if (options["interval"] or ("t" if options["test"] == "t" else "bca")) == "t":
        interval = lambda pi: t_interval(pi, level)  # noqa: E731
    else:
        rng = np.random.default_rng(stream(seed, model.measure.text, "users"))
        interval = lambda pi: bootstrap_interval(pi, options["resamples"], rng, level, "bca")  # noqa: E731
    try:
        return preferences(model, rows, rankings.runs, rankings.topics, common, pairs, users, seed, interval)
    except ValueError as exc:
        raise InputError(f"--users: {exc}") from None
