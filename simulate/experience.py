"""What users of two runs experience: how often a user of run B fares better than one of run A.

A metric's mean hides how its users fare. For a browsing model, every user of a ranking ends
with an outcome X: the model's declared aggregation taken per user (G/N for ``rate`` and
``mean_rate``, G for ``total``, N for ``depth``, the time spent for ``cost``). For runs A and B
on the same topic, with independent users,

    pi_t = P(X_B > X_A) + P(X_B = X_A) / 2,

the probability that a user of B does better than a user of A, ties counted half (0.5: no
difference users would notice; a "probability of superiority", Vargha & Delaney 2000). A
normalised measure (nDCG) divides both runs' outcomes on a topic by the same ideal value, which
leaves pi_t as it is, so outcomes are compared unnormalised. Over the
topics the mean of pi_t is reported with an interval over topics (the comparison's: bootstrap BCa, or
Student's t with the t-test).

The outcome distribution of a ranking is exact where it is finite: probability mass is
propagated through the model's branches as atoms (state, gain so far), merged where they agree,
and each stopping atom is one outcome value (rank i: G/i, G or i). Mass below 1e-12 is dropped
(the exact evaluator's tolerance). Models with a continuous population of users, a time budget
or a cost aggregation, and comparisons where some ranking's atoms do not settle within the
limits (MAX_RANK ranks, MAX_ATOMS atoms per ranking on average), are simulated instead
(users drawn as by ``rpdi simulate``, with streams keyed by run, topic and measure).

>>> from rpdi.metrics import rankings_from_grades
>>> from rpdi.simulate.experience import outcome_distributions
>>> from rpdi.simulate.ranking import rankings_for
>>> from rpdi.metrics.view import View
>>> from rpdi.usermodels import model_for
>>> model = model_for("RR")
>>> ranking = rankings_for(model, View(rankings_from_grades("-$-"), model.k), "nonrelevant")[0, 0]
>>> (values, mass), = outcome_distributions(model, [ranking])  # every RR user stops at rank 2: G/N = 1/2
>>> values.tolist(), mass.tolist()
([0.5], [1.0])
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.seeds import stream
from rpdi.simulate import vector
from rpdi.simulate.ranking import Mixed, Ranking, blocks
from rpdi.usermodels.base import At, BrowsingModel

OUTCOMES = {"rate": "G/N", "mean_rate": "G/N", "total": "G", "depth": "N", "cost": "cost"}
TOL = 1e-12
MAX_ATOMS = 20_000
MAX_RANK = 5_000


def outcome(aggregation: str, G: np.ndarray, N: np.ndarray, cost: np.ndarray | None = None) -> np.ndarray:
    """Each user's outcome under an aggregation: G/N (0 if N is 0 or infinite), G, N or cost."""
    if aggregation in ("rate", "mean_rate"):
        ok = np.isfinite(N) & (N > 0)
        return np.where(ok, G / np.where(ok, N, 1.0), 0.0)
    return {"total": G, "depth": N, "cost": cost}[aggregation]


def finite_outcomes(model: BrowsingModel) -> bool:
    """Whether one user's outcome under ``model`` takes finitely many values on a ranking (no
    continuous start state, no time budget, not cost): then its distribution is computed exactly."""
    return (type(model).draw_start is BrowsingModel.draw_start and model.halflife is None
            and model.aggregation != "cost")


def outcome_distributions(model: BrowsingModel, rankings: list[Ranking]) -> list | None:
    """The exact distribution of one user's outcome on each ranking, [(sorted values, masses)],
    or None where that is not finite (see the module's docstring). All rankings advance rank by
    rank together: the atoms (ranking, state, gain so far, mass) of every ranking are one array."""
    if not finite_outcomes(model) or not rankings:
        return None
    first = rankings[0]
    values = np.arange(len(first.start)) if first.values is None else np.asarray(first.values)
    start = np.stack([r.start for r in rankings])
    gains, seen, best = (np.stack([getattr(r, k) for r in rankings]) for k in ("gains", "seen", "best"))
    length = np.array([r.length for r in rankings])
    W, convention, horizon = gains.shape[1], first.convention, first.horizon
    row, k = np.nonzero(start > 0)
    state, gain, mass = values[k], np.zeros(row.size), start[row, k].astype(float)
    out_r, out_v, out_m = [], [], []
    if convention == "stop":  # an empty ranking: its users read nothing
        empty = length[row] == 0
        out_r.append(row[empty])
        out_v.append(np.zeros(int(empty.sum())))
        out_m.append(mass[empty])
        row, state, gain, mass = row[~empty], state[~empty], gain[~empty], mass[~empty]
    i = 0
    while row.size:
        i += 1
        if i > MAX_RANK or row.size > MAX_ATOMS * len(rankings):
            return None
        tail = i > length[row]
        if tail.any():  # a zero-gain tail: absorbed users never stop (N infinite)
            gone = tail & np.broadcast_to(np.asarray(model.absorbed(state, i), dtype=bool), state.shape)
            if gone.any():
                out_r.append(row[gone])
                out_v.append(outcome(model.aggregation, gain[gone], np.full(int(gone.sum()), np.inf)))
                out_m.append(mass[gone])
                row, state, gain, mass = row[~gone], state[~gone], gain[~gone], mass[~gone]
                if not row.size:
                    break
        j = min(i, W) - 1
        if i <= W:
            at = At(i, gains[row, j], seen[row, j], best[row, j])
        else:
            at = At(i, np.zeros(row.size), seen[row, -1], np.maximum(best[row, -1], gains[row, -1]))
        last = (i >= horizon) | ((convention == "stop") & (i >= length[row]))
        nxt = []
        for br in model.step(state, at):
            p = mass * np.broadcast_to(np.asarray(br.prob, dtype=float), state.shape)
            g = gain + np.broadcast_to(np.asarray(br.gain, dtype=float), state.shape)
            cont = np.broadcast_to(np.asarray(br.cont, dtype=bool), state.shape) & ~last
            s = state if br.state is None else np.broadcast_to(np.asarray(br.state), state.shape)
            stop = ~cont & (p > 0)
            out_r.append(row[stop])
            out_v.append(outcome(model.aggregation, g[stop], np.full(int(stop.sum()), float(i))))
            out_m.append(p[stop])
            go = cont & (p > 0)
            nxt.append((row[go], s[go], g[go], p[go]))
        row, state, gain, mass = _merge(*(np.concatenate(parts) for parts in zip(*nxt)))
        alive = np.bincount(row, weights=mass, minlength=len(rankings))
        keep = alive[row] > TOL  # a ranking's last users, below the tolerance, are dropped
        row, state, gain, mass = row[keep], state[keep], gain[keep], mass[keep]
    r, v, m = (np.concatenate(x) for x in (out_r, out_v, out_m))
    order = np.argsort(r, kind="stable")
    cuts = np.searchsorted(r[order], np.arange(len(rankings) + 1))
    return [_atoms(v[order[a:b]], m[order[a:b]]) for a, b in zip(cuts[:-1], cuts[1:])]


def _merge(row, state, gain, mass):
    """Atoms with the same (ranking, state, gain) as one."""
    if row.size < 2:
        return row, state, gain, mass
    keys, inverse = np.unique(np.stack([row.astype(float), state.astype(float), gain]), axis=1,
                              return_inverse=True)
    return (keys[0].astype(np.intp), keys[1].astype(state.dtype), keys[2],
            np.bincount(inverse.ravel(), weights=mass))


def _atoms(values: np.ndarray, mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and their total masses; values are rounded to 10 decimals, so that
    equal outcomes summed in another order (1/3 + 2/3 and 2/3 + 1/3) tie as they should."""
    v, inverse = np.unique(np.round(values, 10), return_inverse=True)
    return v, np.bincount(inverse.ravel(), weights=mass, minlength=v.size)


def sampled_distributions(model: BrowsingModel, rankings: list[Ranking], users: int,
                          tasks: list[np.random.SeedSequence]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The empirical outcome distribution of ``users`` simulated users of each ranking (lockstep
    engine, all rankings at once, each on the block streams of its task as ``rpdi simulate``
    draws them): (sorted values, shares) per ranking."""
    lanes = [(ranking, n, rng) for ranking, task in zip(rankings, tasks) for n, rng in blocks(task, users)]
    x = [outcome(model.aggregation, *sessions) for sessions in vector.batch(model, lanes)]
    per = len(x) // max(len(rankings), 1)  # every ranking has the same number of blocks
    out = []
    for k in range(len(rankings)):
        y = np.concatenate(x[k * per:(k + 1) * per])
        out.append(_atoms(y, np.full(y.size, 1.0 / y.size)))
    return out


def superiority(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """P(X_B > X_A) + P(X_B = X_A) / 2 for independent X_A, X_B given as (sorted values, masses).

    >>> import numpy as np
    >>> superiority((np.array([0.0, 1.0]), np.array([0.5, 0.5])), (np.array([1.0]), np.array([1.0])))
    0.75
    """
    va, ma = a
    vb, mb = b
    below = np.concatenate([[0.0], np.cumsum(ma)])  # mass of A strictly below each cut
    lo = np.searchsorted(va, vb, side="left")
    hi = np.searchsorted(va, vb, side="right")
    share = below[lo] + 0.5 * (below[hi] - below[lo])
    return float((mb * share).sum() / (ma.sum() * mb.sum()))


def user_preference(model: BrowsingModel, rows: dict, runs, topic_ids, topics, pairs, users: int,
                    seed: int, interval) -> list[dict]:
    """For each pair (a, b) of run indices: the mean over ``topics`` (indices into ``topic_ids``) of pi_t, its
    interval over topics (``interval(matrix of pi_t per pair) -> (low, high)``), the outcome's
    name and how it was found (``exact`` or ``simulated``). ``rows`` maps (run,
    topic) indices to :class:`Ranking` (``ranking.rankings_for``). For a mixture's users
    (:class:`Mixed` rows: X-IA's), pi_t = sum_v p_v pi_tv compares users who drew the same variant
    (intent) v (:func:`preferences` gives the pi_tv too)."""
    return preferences(model, rows, runs, topic_ids, topics, pairs, users, seed, interval)[0]


def preferences(model: BrowsingModel, rows: dict, runs, topic_ids, topics, pairs, users: int,
                seed: int, interval) -> tuple[list[dict], np.ndarray | None]:
    """:func:`user_preference`'s records, and for a mixture's users the pi_tv of
    :func:`variant_preference` (pairs, topics, V) (None for other users)."""
    pi, method = variant_preference(model, rows, runs, topic_ids, topics, pairs, users, seed)
    by_variant = None
    if pi.ndim == 3:
        by_variant, pi = pi, (pi * variant_shares(rows, topics)[None]).sum(-1)
    low, high = interval(pi)
    return [{"user_outcome": OUTCOMES[model.aggregation], "user_b_better": float(pi[k].mean()),
             "user_ci_low": float(low[k]), "user_ci_high": float(high[k]), "user_method": method}
            for k in range(len(pairs))], by_variant


def variant_preference(model: BrowsingModel, rows: dict, runs, topic_ids, topics, pairs, users: int,
                       seed: int) -> tuple[np.ndarray, str]:
    """pi_t of every pair (rows of the result) on every topic of ``topics`` (columns), and how it
    was found; for a mixture's :class:`Mixed` rows pi_tv per variant v too, (pairs, topics, V): the
    probability that a user of b who drew v fares better than a user of a who drew v (a variant on
    which the inner user is undefined: both read nothing, 1/2). This compares like with like where
    the variants mean the same for every run (intents); the shares are the first run's."""
    needed = sorted({s for pair in pairs for s in pair})
    keys = [(s, t) for s in needed for t in topics]
    mixed = isinstance(rows[keys[0]], Mixed)
    inner = model.inner if mixed else model
    lanes = [(key, v) for key in keys for v in range(len(rows[key].variants))] if mixed else [(key, None) for key in keys]
    use = [(key, v) for key, v in lanes if v is None or rows[key].defined[v]]
    ranking = lambda key, v: rows[key] if v is None else rows[key].variants[v]  # noqa: E731
    exact = outcome_distributions(inner, [ranking(*lane) for lane in use])
    if exact is None and users <= 0:
        raise ValueError(f"{model.measure.text}: the outcome distribution is not finite; "
                         f"simulating it needs users > 0")
    method = "simulated" if exact is None else "exact"
    if exact is None:
        tasks = [stream(seed, runs[s], str(topic_ids[t]), model.measure.text, "experience",
                        *([] if v is None else [str(v)])) for (s, t), v in use]
        exact = sampled_distributions(inner, [ranking(*lane) for lane in use], users, tasks)
    nothing = (np.zeros(1), np.ones(1))  # an undefined variant's users: outcome 0
    dist = dict.fromkeys(lanes, nothing) | dict(zip(use, exact))
    if not mixed:
        return np.array([[superiority(dist[(a, t), None], dist[(b, t), None]) for t in topics] for a, b in pairs]), method
    V = len(rows[keys[0]].variants)
    return np.array([[[superiority(dist[(a, t), v], dist[(b, t), v]) for v in range(V)] for t in topics]
                     for a, b in pairs]), method


def variant_shares(rows: dict, topics) -> np.ndarray:
    """(topics, V) the variants' probabilities on each topic (the same for every run)."""
    first = next(iter(rows))[0]
    return np.array([rows[first, t].shares for t in topics])
