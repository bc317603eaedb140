"""Simulated users against the exact expectations of their browsing models.

What is checked (fixed seeds everywhere, so every run of the suite draws the same users):

* **agreement**: every model of ``usermodels.MODELS`` (one representative measure name each),
  on a random graded collection (unjudged documents, tied scores, a short ranking, a topic with
  nothing relevant, relevant documents never retrieved, a topic missing from a run) and on the
  seeds' ranking "$$---$----$-----$---", simulated with both engines, is compared with the exact
  expectation by z = (estimate - exact) / stderr. All the z-tests of a family (engine x data)
  are corrected together with Holm's step-down at alpha = 0.01 and none may reject. Where every
  user provably ends with the same value of the aggregated quantity (found by enumerating the
  model's reachable outcomes, independently of the engines), the estimate must equal the exact
  value to 1e-12 with a standard error of exactly 0; elsewhere the standard error must be > 0.
* **the check can fail**: an off-by-one RBP closed form (p^i for p^(i-1)), the wrong
  aggregation (E[G/N] for RBP) and two planted model bugs (persistence p^1.01; no gain on the
  stopping branch) are all rejected, while the correct versions pass on the same users.
* **reproducibility**: same seed, same numbers, whatever the order of measures or runs, and
  whatever the batching of users into blocks.
* **estimators**: ``Moments`` against direct numpy formulas, the delta-method standard error
  against the spread of many independent replications (a chi-square bound), exact zero-variance
  reporting, users who never stop.
* **target standard error**: sampling stops once the standard error reaches the target, or at
  ``max_users``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from rpdi.metrics.evaluate import load_qrels, load_runs, rankings_from_grades, score
from rpdi.metrics.rankings import build_rankings
from rpdi.metrics.view import View
from rpdi.simulate import Moments, simulate, simulate_ranking
from rpdi.simulate import vector
from rpdi.metrics.seeds import stream
from rpdi.simulate.ranking import BLOCK, block_rng, rankings_for
from rpdi.usermodels import MODELS, Branch, exact, model_for
from rpdi.usermodels.rbp import RBP

ALPHA = 0.01
SEED_RANKING = "$$---$----$-----$---"  # relevant at 1, 2, 6, 11, 17 (seed 003)
MEASURES = ["P@5", "RR", "RR@3", "AP", "AP@5", "RBP(p=0.8)", "RBP(p=0.95)@10", "ERR@10", "SDCG@5",
            "DCG@5", "nDCG@5", "HIT@3", "Success@3", "RR2", "CautiousRR(c=2)", "RBP2(p1=0.9,p2=0.5)",
            "INST(T=2.0)", "INSQ(T=2.0)", "NERR8@5", "NERR9@5", "NERR10(p=0.7)", "NERR11(T=2.0)", "TBG",
            "BetaRBP(a=8,b=2)", "BPM(T=1)@5", "BPM-Dynamic(K=5)", "IFT-C1", "IFT-C2", "IFT-C1-C2", "U(L=20)",
            "NPV(rate=0.25)", "SET(beta=0.5)@5"]
VECTOR_USERS = 20_000
AGENT_USERS = 2_000


# ---------------------------------------------------------------------------------------------
# helpers


def p_value(z: float) -> float:
    """Two-sided normal p-value."""
    return float(2 * stats.norm.sf(abs(z)))


def test_holm_step_down(holm_by_definition):
    """Holm against hand-worked cases: it stops at the first p above alpha / (m - k)."""
    assert holm_by_definition([0.001, 0.02, 0.03, 0.5], 0.05) == [0]  # 0.001 <= 0.0125; 0.02 > 0.0167
    assert holm_by_definition([0.01, 0.012, 0.0001], 0.05) == [2, 0, 1]  # 0.0001, 0.01 <= 0.025, 0.012 <= 0.05
    assert holm_by_definition([0.2, 0.3], 0.05) == []
    assert holm_by_definition([0.04, 0.04], 0.05) == []  # 0.04 > 0.025: nothing, though each is below 0.05


def constant_outcome(model, ranking, aggregation: str, limit: int = 2_000, shortcut: bool = True) -> bool:
    """Whether every user provably ends with the same value of the aggregated quantity.

    Enumerates the model's reachable (state, gain so far) pairs rank by rank from the start
    states with positive probability, collecting the (G, N) of every stopping path, until the
    quantity is seen to take two values or no path is left (``shortcut``: or, past the end of the
    ranking, no gain is left to accrue, see below). ``total``: G; ``depth``: N;
    ``mean_rate``: G/N (0 if N is infinite); ``rate``: E[G]/E[N] is exact when G/N is the same
    for every user (G = R N, e.g. G always 0), since the delta method's linearised quantity
    G - R N is then 0. Independent of the engines and the exact evaluator.
    """
    G, N, r = set(), set(), set()

    def add(g, n):
        G.add(g)
        N.add(n)
        r.add(round(g / n, 12) if math.isfinite(n) and n > 0 else 0.0)

    def varies():
        if aggregation == "total":
            return len(G) > 1
        if aggregation in ("depth", "cost"):
            return len(N) > 1
        if aggregation == "rate" and math.inf in N:
            return len(N) > 1  # E[N] infinite (rate 0) only if every user never stops
        return len(r) > 1  # mean_rate; rate: G = R N for every user makes E[G]/E[N] exact

    values = np.arange(len(ranking.start)) if ranking.values is None else ranking.values
    # a continuous population (BetaRBP) is enumerated over its discrete state values (the
    # exact evaluator's quadrature nodes), which share the support's reachable outcomes
    frontier = {(values[s].item(), 0.0) for s in np.flatnonzero(ranking.start > 0)}
    if ranking.convention == "stop" and ranking.length == 0:
        return True  # nobody reads anything
    i = 0
    while frontier:
        i += 1
        at = ranking.at(i)
        nxt = set()
        for state, g in frontier:
            s = np.array([state])
            if i > ranking.length and bool(np.asarray(model.absorbed(s, i)).all()):
                add(g, math.inf)
                continue
            for b in model.step(s, at):
                if float(_one(b.prob)) <= 0:
                    continue
                g2 = g + float(_one(b.gain))
                cont = bool(_one(b.cont)) and not ranking.ends_at(i)
                s2 = state if b.state is None else int(_one(b.state))
                if cont:
                    nxt.add((s2, g2))
                    if model.halflife is not None:  # the time budget may end it here too
                        add(g2, i)
                else:
                    add(g2, i)
        if varies() or len(nxt) > limit:
            return False
        if (shortcut and i > ranking.length and aggregation in ("total", "rate", "mean_rate")
                and G <= {0.0} and math.inf not in N and all(g == 0.0 for _, g in nxt)):
            # past the ranking every document has gain 0, and these models (whose absorption does
            # not depend on the rank) gain nothing there: every later path ends with G = 0, so G,
            # G/N and G - R N stay 0 for everyone; without this the walk goes on to the horizon
            return True
        frontier = nxt
    return not varies()


def _one(x):
    """The value of a scalar or one-element array."""
    return np.asarray(x).reshape(-1)[0]


def test_constant_outcome_enumeration():
    """The enumeration itself: deterministic users are found constant, random ones are not."""
    rk = rankings_from_grades(SEED_RANKING)
    row = lambda m: rankings_for(m, View(rk, m.k), "unknown")[0, 0]  # noqa: E731
    for name in ["P@5", "RR", "RR2", "CautiousRR(c=2)", "HIT@3", "NERR8@5"]:
        m = model_for(name)
        assert constant_outcome(m, row(m), m.aggregation), name
    for name in ["RBP(p=0.8)", "AP", "ERR@10", "SDCG@5", "DCG@5", "TBG"]:
        m = model_for(name)
        assert not constant_outcome(m, row(m), m.aggregation), name
    m = model_for("RBP(p=0.8)")  # nothing relevant: G = 0 for everyone, so the rate is exactly 0
    assert constant_outcome(m, rankings_for(m, View(rankings_from_grades("-----"), None), "unknown")[0, 0], "rate")
    # the shortcut past the ranking's end answers as the walk to the horizon does
    for name, grades in [("RBP(p=0.8)", "-----"), ("TBG", "--"), ("AP", "-?-"), ("CautiousRR(c=2)", "--"),
                         ("NERR10(p=0.7)", "$--")]:
        m = model_for(name)
        row = rankings_for(m, View(rankings_from_grades(grades, R=2 if name == "AP" else None), m.k), "unknown")[0, 0]
        for aggregation in ("total", "rate", "mean_rate"):
            assert (constant_outcome(m, row, aggregation)
                    == constant_outcome(m, row, aggregation, shortcut=False)), (name, grades, aggregation)


def agreement(qrels, runs, measures, engine: str, users: int, seed: int, convention: str = "unknown"):
    """Per-topic (label, z or None) of simulation against exact, checking zero-variance cases."""
    records = simulate(qrels, runs, measures, users=users, seed=seed, engine=engine, per_topic=True,
                       convention=convention)
    rankings = build_rankings(load_qrels(qrels), load_runs(runs), "qrels")
    topics = {str(t): k for k, t in enumerate(rankings.topics)}
    rows = {}
    out = []
    for r in records:
        if r["topic"] == "all":
            continue
        label = f"{engine} {convention} {r['measure']} {r['run']}/{r['topic']}"
        model = model_for(r["measure"])
        if r["exact"] is None:  # undefined (R = 0): nothing simulated
            assert r["estimate"] is None and r["users"] == 0, label
            continue
        assert r["users"] == users, label
        if r["measure"] not in rows:
            rows[r["measure"]] = rankings_for(model, View(rankings, model.k), convention)
        row = rows[r["measure"]][rankings.runs.index(r["run"]), topics[r["topic"]]]
        if constant_outcome(model, row, model.aggregation):
            assert r["stderr"] == 0.0, (label, r)
            assert abs(r["estimate"] - r["exact"]) <= 1e-12, (label, r)
            out.append((label, None))
        else:
            assert r["stderr"] > 0, (label, r)
            out.append((label, r["z"]))
    return out


def seed_ranking_agreement(measures, engine: str, users: int, seed: int):
    """(label, z or None) on the seeds' ranking, through ``simulate_ranking`` directly."""
    rk = rankings_from_grades(SEED_RANKING)
    out = []
    for name in measures:
        model = model_for(name)
        ex = exact(model, rk, "unknown").value[0, 0]
        row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
        mom = simulate_ranking(model, row, users, stream(seed, "seed-ranking", name), engine)
        est, se = mom.estimate(model.aggregation)
        if model.normalised:  # nDCG: E[G] over the same user's E[G] on the ideal ranking
            ideal = exact(model, rk, "unknown").values["total"][0, 0]
            raw = exact(model_for(name.replace("nDCG", "DCG")), rk, "unknown").values["total"][0, 0]
            est, se = est * ideal / raw, se * ideal / raw
        label = f"{engine} seed-ranking {name}"
        assert mom.users == users
        if constant_outcome(model, row, model.aggregation):
            assert se == 0.0 and abs(est - ex) <= 1e-12, (label, est, ex, se)
            out.append((label, None))
        else:
            assert se > 0, label
            out.append((label, (est - ex) / se))
    return out


def assert_no_holm_rejection(results, holm_by_definition):
    tested = [(label, z) for label, z in results if z is not None]
    assert tested, "no z-test was made"
    p = [p_value(z) for _, z in tested]
    rejected = holm_by_definition(p, ALPHA)
    assert not rejected, [(tested[i][0], tested[i][1]) for i in rejected]
    worst = max(tested, key=lambda t: abs(t[1]))
    print(f"\n{len(tested)} z-tests, {len(results) - len(tested)} exact; largest |z| {abs(worst[1]):.2f} "
          f"({worst[0]}), smallest p {min(p):.2g}, Holm's first threshold {ALPHA / len(p):.2g}")
    return abs(worst[1])


# ---------------------------------------------------------------------------------------------
# 1. agreement of simulation and exact expectation


def test_every_model_has_a_representative_measure():
    assert {model_for(m).measure_name for m in MEASURES} == set(MODELS)


def test_seed_ranking_vector_engine(holm_by_definition):
    results = seed_ranking_agreement(MEASURES, "vector", VECTOR_USERS, seed=11)
    assert_no_holm_rejection(results, holm_by_definition)
    exact_cases = {label.split()[-1] for label, z in results if z is None}
    # P@k, RR, RR2, cautious RR, HIT and Success read deterministically; on this ranking the
    # NERR users with a cutoff stop at rank 1 (gain 1 there: continue with probability 0)
    assert {"P@5", "RR", "RR@3", "RR2", "CautiousRR(c=2)", "HIT@3", "Success@3", "NERR8@5"} <= exact_cases
    assert {"RBP(p=0.8)", "AP", "ERR@10", "SDCG@5", "DCG@5", "nDCG@5", "TBG"}.isdisjoint(exact_cases)


def test_seed_ranking_agent_engine(holm_by_definition):
    assert_no_holm_rejection(seed_ranking_agreement(MEASURES, "agent", AGENT_USERS, seed=12), holm_by_definition)


def test_random_collection_vector_engine(random_collection, holm_by_definition):
    qrels, runs = random_collection(np.random.default_rng(2021), n_runs=2, n_topics=6, negative=False)
    results = agreement(qrels, runs, MEASURES, "vector", VECTOR_USERS, seed=21)
    results += agreement(qrels, runs, MEASURES, "vector", VECTOR_USERS // 2, seed=22, convention="stop")
    assert sum(z is None for _, z in results) >= 20 and sum(z is not None for _, z in results) >= 100
    assert_no_holm_rejection(results, holm_by_definition)


# The agent engine on the random collection: one model per mechanism it must get right (state
# transitions, targets drawn per topic, never stopping, cutoffs, grades, time budgets, a
# population); every model meets the agent engine on the seeds' ranking above and the random
# collection with the vector engine.
AGENT_MEASURES = ["RR", "AP", "RBP(p=0.8)", "ERR@10", "nDCG@5", "HIT@3", "RR2", "CautiousRR(c=2)",
                  "RBP2(p1=0.9,p2=0.5)", "INST(T=2.0)", "TBG", "BetaRBP(a=8,b=2)"]


def test_random_collection_agent_engine(random_collection, holm_by_definition):
    qrels, runs = random_collection(np.random.default_rng(2021), n_runs=2, n_topics=6, negative=False)
    runs = {"run0": runs["run0"]}
    assert_no_holm_rejection(agreement(qrels, runs, AGENT_MEASURES, "agent", AGENT_USERS, seed=23), holm_by_definition)


@pytest.mark.parametrize("name", ["RBP(p=0.8)", "SDCG@5", "ERR@10", "AP", "RR2", "TBG", "INST(T=2.0)"])
@pytest.mark.parametrize("grades", [SEED_RANKING, "-$?-$-", "---"])
def test_depth_and_total_aggregations(name, grades):
    """E[N] and E[G] of the simulated users against the exact evaluator's (plus time: 'cost')."""
    rk = rankings_from_grades(grades, R=6 if name == "AP" else None)
    model = model_for(name)
    ex = exact(model, rk, "unknown")
    row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
    mom = simulate_ranking(model, row, VECTOR_USERS // 2, stream(5, grades, name))
    zs = []
    for aggregation in ("depth", "total", "cost"):
        value = ex.values[aggregation][0, 0]
        est, se = mom.estimate(aggregation)
        if np.isinf(value):  # users who never stop (AP's target beyond the ranking)
            assert np.isinf(est) and ex.never[0, 0] > 0 and mom.never > 0
        elif constant_outcome(model, row, aggregation):
            assert se == 0.0 and abs(est - value) <= 1e-12, (aggregation, est, value)
        else:
            assert se > 0
            zs.append((est - value) / se)
    # three z-tests per case, Bonferroni within the case (conservative; Holm over all is above)
    assert all(p_value(z) > ALPHA / 3 for z in zs), zs


# ---------------------------------------------------------------------------------------------
# 2. the check can fail


def rbp_closed_form(gains, p):
    """RBP = (1-p) sum_i g_i p^(i-1)."""
    g = np.asarray(gains, float)
    return (1 - p) * float((g * p ** np.arange(len(g))).sum())


def rbp_off_by_one(gains, p):
    """A planted off-by-one: p^i instead of p^(i-1)."""
    g = np.asarray(gains, float)
    return (1 - p) * float((g * p ** np.arange(1, len(g) + 1)).sum())


def _seed_rbp_moments(model, users=VECTOR_USERS, seed=31):
    rk = rankings_from_grades(SEED_RANKING)
    row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
    return rk, simulate_ranking(model, row, users, stream(seed, "planted", type(model).__name__))


def test_off_by_one_closed_form_is_rejected(holm_by_definition):
    gains = [1.0 if c == "$" else 0.0 for c in SEED_RANKING]
    model = model_for("RBP(p=0.8)")
    rk, mom = _seed_rbp_moments(model)
    right, wrong = rbp_closed_form(gains, 0.8), rbp_off_by_one(gains, 0.8)
    # closed form against exact: the right one to rounding, the planted one not
    ex = exact(model, rk, "nonrelevant").value[0, 0]
    assert abs(right - ex) <= 1e-9 and abs(right - score("RBP(p=0.8)", SEED_RANKING)) <= 1e-12
    assert abs(wrong - ex) > 1e-3
    # simulation against the closed forms, as one Holm family
    est, se = mom.estimate("rate")
    z_right, z_wrong = (est - right) / se, (est - wrong) / se
    assert abs(z_right) < 3 and abs(z_wrong) > 20, (z_right, z_wrong)
    assert holm_by_definition([p_value(z_right), p_value(z_wrong)], ALPHA) == [1]


def test_wrong_aggregation_is_rejected(holm_by_definition):
    """E[G/N] is not RBP: the per-user mean rate disagrees with the closed form."""
    gains = [1.0 if c == "$" else 0.0 for c in SEED_RANKING]
    _, mom = _seed_rbp_moments(model_for("RBP(p=0.8)"))
    right = rbp_closed_form(gains, 0.8)
    (rate, se_rate), (mean_rate, se_mean_rate) = mom.estimate("rate"), mom.estimate("mean_rate")
    z_rate, z_mean_rate = (rate - right) / se_rate, (mean_rate - right) / se_mean_rate
    assert abs(z_rate) < 3 and abs(z_mean_rate) > 20, (z_rate, z_mean_rate)
    assert holm_by_definition([p_value(z_rate), p_value(z_mean_rate)], ALPHA) == [1]


class _SlowerRBP(RBP):
    """Planted bug: continues with probability p^1.01 instead of p."""

    def step(self, state, at):
        q = self.p ** 1.01
        return [Branch(q, at.gain, True), Branch(1 - q, at.gain, False)]


class _ForgetfulRBP(RBP):
    """Planted bug: the document read last (on the stopping branch) brings no gain."""

    def step(self, state, at):
        return [Branch(self.p, at.gain, True), Branch(1 - self.p, 0.0, False)]


@pytest.mark.parametrize("bug, users, aggregations", [
    (_SlowerRBP, 2_000_000, ("depth", "rate")),  # E[N] = 4.956 instead of 5: a small effect
    (_ForgetfulRBP, VECTOR_USERS, ("total", "rate")),  # E[G] = sum g_i p^i: a large one
])
def test_planted_model_bug_is_detected(bug, users, aggregations, holm_by_definition):
    measure = "RBP(p=0.8)"
    rk = rankings_from_grades(SEED_RANKING)
    ex = exact(model_for(measure), rk, "unknown")  # the unmodified model's expectations
    for model in (model_for(measure), bug(measure)):
        row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
        mom = simulate_ranking(model, row, users, stream(41, "planted-model", measure))
        zs = [(mom.estimate(a)[0] - ex.values[a][0, 0]) / mom.estimate(a)[1] for a in aggregations]
        rejected = holm_by_definition([p_value(z) for z in zs], ALPHA)
        if type(model) is RBP:
            assert rejected == [], zs
        else:
            assert 0 in rejected and abs(zs[0]) > 6, zs


# ---------------------------------------------------------------------------------------------
# 3. reproducibility


def _by_key(records):
    return {(r["run"], r["topic"], r["measure"]): r for r in records}


def test_same_seed_same_numbers_whatever_the_order(random_collection):
    qrels, runs = random_collection(np.random.default_rng(2021), n_runs=2, n_topics=6, negative=False)
    one = simulate(qrels, runs, ["RBP(p=0.8)", "AP", "ERR@10"], users=3000, seed=7, per_topic=True)
    again = simulate(qrels, runs, ["RBP(p=0.8)", "AP", "ERR@10"], users=3000, seed=7, per_topic=True)
    assert one == again
    swapped = simulate(qrels, runs, ["ERR@10", "RBP(p=0.8)", "AP"], users=3000, seed=7, per_topic=True)
    assert _by_key(swapped) == _by_key(one)
    reversed_runs = simulate(qrels, {"run1": runs["run1"], "run0": runs["run0"]}, ["RBP(p=0.8)", "AP", "ERR@10"],
                             users=3000, seed=7, per_topic=True)
    assert _by_key(reversed_runs) == _by_key(one)
    alone = simulate(qrels, {"run1": runs["run1"]}, ["AP"], users=3000, seed=7, per_topic=True)
    assert all(one_r == _by_key(one)[k] for k, one_r in _by_key(alone).items() if k[1] != "all")
    other = simulate(qrels, runs, ["RBP(p=0.8)"], users=3000, seed=8, per_topic=True)
    assert [r["estimate"] for r in other] != [r["estimate"] for r in one if r["measure"] == "RBP(p=0.8)"]


@pytest.mark.parametrize("engine", ["vector", "agent"])
def test_blocks_are_keyed_by_index(engine):
    """users = 3 blocks gives the moments of three separately simulated blocks 0, 1, 2."""
    from rpdi.simulate import agents, vector

    alone = {"vector": vector.sessions, "agent": agents.sessions}[engine]
    model = model_for("AP")
    rk = rankings_from_grades(SEED_RANKING, R=6)
    row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
    task = stream(3, "blocks")
    users = 3 * BLOCK if engine == "vector" else BLOCK + 100  # agents: a full and a partial block
    whole = simulate_ranking(model, row, users, task, engine)
    parts = Moments()
    done = 0
    for b in range(math.ceil(users / BLOCK)):
        n = min(BLOCK, users - done)
        parts.add(*alone(model, row, n, block_rng(task, b)))
        done += n
    for a in ("mean_rate", "total", "rate", "depth"):
        assert whole.estimate(a) == parts.estimate(a) or np.isnan(whole.estimate(a)[1])
    assert whole.estimate("mean_rate") == parts.estimate("mean_rate")
    if engine == "agent":
        return
    # a target standard error that stops after two blocks gives the two-block numbers
    two = simulate_ranking(model, row, 0, task, engine, target_stderr=1.0, max_users=users)
    fixed = simulate_ranking(model, row, 2 * BLOCK, task, engine)
    assert two.users == 2 * BLOCK and two.estimate("mean_rate") == fixed.estimate("mean_rate")


def test_vector_engine_matches_a_bare_lockstep_loop():
    """The engine draws as documented: one uniform per user for the start state, then one per
    user per document read, in rank order; a hand-written loop with those draws gives the very
    same sessions."""
    model = model_for("RBP(p=0.8)")
    rk = rankings_from_grades(SEED_RANKING)
    row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
    G, N, _ = vector.sessions(model, row, 5000, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    rng.random(5000)
    G0, N0 = np.zeros(5000), np.zeros(5000)
    alive = np.arange(5000)
    i = 0
    while alive.size:
        i += 1
        u = rng.random(alive.size)
        G0[alive] += row.at(i).gain
        N0[alive] = i
        alive = alive[u < 0.8]
    assert np.array_equal(G, G0) and np.array_equal(N, N0)


def reference_sessions(model, ranking, users: int, rng):
    """One ranking simulated plainly, as the engine documents its draws: the model's start
    draw, then at each rank one uniform per user still reading (drawn even where the step is
    deterministic), the branch taken the first whose cumulative probability exceeds it, and
    with a time budget one more uniform per user against the survival of the branch's time."""
    state = np.array(ranking.draw_start(model, rng, users))
    G, N, spent = np.zeros(users), np.zeros(users), np.zeros(users)
    alive = np.arange(users) if not (ranking.convention == "stop" and ranking.length == 0) else np.arange(0)
    i = 0
    while alive.size:
        i += 1
        at = ranking.at(i)
        if i > ranking.length:
            gone = np.broadcast_to(np.asarray(model.absorbed(state[alive], i), dtype=bool), alive.shape)
            N[alive[gone]] = np.inf
            alive = alive[~gone]
            if not alive.size:
                break
        branches = model.step(state[alive], at)
        u = rng.random(alive.size)
        taken = np.full(alive.size, len(branches) - 1)
        cumulative = 0.0
        for b, branch in enumerate(branches[:-1]):
            cumulative = cumulative + np.asarray(branch.prob, dtype=float)
            taken = np.where((taken == len(branches) - 1) & (u < cumulative), b, taken)

        def value(field, kind=float, default=None):
            out = np.empty(alive.size, dtype=kind) if default is None else np.array(default)
            for b, branch in enumerate(branches):
                x = getattr(branch, field)
                if x is not None:
                    out[taken == b] = np.broadcast_to(np.asarray(x, dtype=kind), alive.shape)[taken == b]
            return out

        G[alive] += value("gain")
        N[alive] = i
        time = value("time")
        spent[alive] += time
        state[alive] = value("state", state.dtype, state[alive])
        cont = value("cont", bool)
        if model.halflife is not None:
            cont &= rng.random(alive.size) < model.survival(time)
        if ranking.ends_at(i):
            cont[:] = False
        alive = alive[cont]
    return G, N, np.where(np.isfinite(N), spent, np.inf)


DEFAULT_JOB = ["P@10", "RR", "AP", "RBP(p=0.5)", "RBP(p=0.8)", "RBP(p=0.95)", "ERR@20", "SDCG@10", "INST", "TBG"]


def _lanes_match_reference(model, rows, users, monkeypatch):
    """vector.batch on all ``rows`` at once (split into groups of ~3 lanes) against each ranking
    simulated alone by the plain reference, every lane on its own stream."""
    monkeypatch.setattr(vector, "GROUP", 3 * users)
    rng = lambda k: block_rng(stream(11, str(k), model.measure.text), 0)  # noqa: E731
    got = vector.batch(model, [(row, users, rng(k)) for k, row in enumerate(rows)])
    for k, (row, sessions) in enumerate(zip(rows, got)):
        want = reference_sessions(model, row, users, rng(k))
        for x, y in zip(sessions, want):
            assert np.array_equal(x, y), (model, k)


@pytest.mark.parametrize("collection", ["synthetic", "cast"])
def test_batched_engine_gives_each_ranking_its_own_sessions(collection, monkeypatch):
    """Every ranking of a collection simulated in one batch gets, bit for bit, the sessions a
    plain one-ranking-at-a-time loop draws on its stream: the default job's measures on the
    synthetic collection and on CAsT 2021 (every 25th ranking, deep first relevant documents
    included)."""
    from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
    from rpdi.experiments.synthetic import synthetic_collection

    if collection == "cast":
        qrels, runs, every, users = CAST2021_QRELS, cast2021_runs(), 25, 16
    else:
        (qrels, runs), every, users = synthetic_collection(topics=30, runs=4, depth=100, seed=7), 8, 16
    rk = build_rankings(load_qrels(qrels), load_runs(runs), "qrels")
    for measure in DEFAULT_JOB:
        model = model_for(measure)
        rows = rankings_for(model, View(rk, model.k), "unknown")
        keys = [key for key in rows if rk.present[key]][::every]
        _lanes_match_reference(model, [rows[key] for key in keys], users, monkeypatch)


@pytest.mark.parametrize("measure", ["TBG", "RR@3", "AP", "RBP2(p1=0.9,p2=0.5)", "BetaRBP(a=8,b=2)", "ERR@10"])
def test_batched_engine_with_lengths_and_convention_stop(measure, monkeypatch):
    """Lanes of different lengths (an empty one), document lengths in words, convention stop
    (users stop at the end of their own list), states that move and a continuous population:
    batched, each lane's sessions are still the plain loop's."""
    model = model_for(measure)
    grades = [SEED_RANKING, "", "-$?-$-", "---", "$"]
    for convention in ("stop", "nonrelevant"):
        lanes = [rankings_for(model, View(rankings_from_grades(g, R=2 if g == "$" else None), model.k),
                              convention)[0, 0] for g in grades]
        lanes[0] = dataclasses.replace(lanes[0], words=150.0 * np.arange(1, len(lanes[0].gains) + 1))
        _lanes_match_reference(model, lanes, 300, monkeypatch)


# ---------------------------------------------------------------------------------------------
# 4. estimators


def test_moments_against_numpy():
    rng = np.random.default_rng(1)
    G = rng.random(10_000) * 3 + 1e6  # a large offset: the shifted sums must not cancel
    N = rng.integers(1, 20, 10_000).astype(float)
    C = N * 2.5
    m = Moments()
    for lo in range(0, 10_000, 3000):  # added in blocks
        m.add(G[lo:lo + 3000], N[lo:lo + 3000], C[lo:lo + 3000])
    n = G.size
    assert m.estimate("total") == pytest.approx((G.mean(), G.std() / math.sqrt(n)), rel=1e-9)
    assert m.estimate("depth") == pytest.approx((N.mean(), N.std() / math.sqrt(n)), rel=1e-12)
    assert m.estimate("cost") == pytest.approx((C.mean(), C.std() / math.sqrt(n)), rel=1e-12)
    r = G / N
    assert m.estimate("mean_rate") == pytest.approx((r.mean(), r.std() / math.sqrt(n)), rel=1e-9)
    # delta method, written as the standard error of the linearised z_i = (G_i - R N_i) / mean N
    R = G.mean() / N.mean()
    z = (G - R * N) / N.mean()
    assert m.estimate("rate") == pytest.approx((R, z.std() / math.sqrt(n)), rel=1e-6)
    with pytest.raises(ValueError):
        m.estimate("median")
    assert all(np.isnan(Moments().estimate("rate")))


def test_zero_variance_is_exact():
    m = Moments()
    for _ in range(7):  # 0.1 summed 70000 times is not 7000.0 exactly; the estimate must be 0.1
        m.add(np.full(10_000, 0.1), np.full(10_000, 3.0), np.full(10_000, 3.0))
    assert m.estimate("total") == (0.1, 0.0)
    assert m.estimate("depth") == (3.0, 0.0)
    assert m.estimate("rate") == (0.1 / 3.0, 0.0)
    assert m.estimate("mean_rate") == (0.1 / 3.0, 0.0)
    nothing = Moments()
    nothing.add(np.zeros(100), np.arange(1.0, 101.0), np.arange(1.0, 101.0))
    assert nothing.estimate("rate") == (0.0, 0.0)  # G = 0 always: exactly 0, however N varies
    assert nothing.estimate("depth")[1] > 0
    # G = N / 3 for every user (G/N equal to the last bit or nearly): the rate is exact, not a
    # standard error made of rounding noise
    N = np.random.default_rng(2).integers(1, 50, 30_000).astype(float)
    for G in (N / 3, N * 0.1 * 3, N.copy()):
        prop = Moments()
        prop.add(G, N, N)
        est, se = prop.estimate("rate")
        assert se == 0.0 and est == pytest.approx(G[0] / N[0], rel=1e-15, abs=0)


def test_users_who_never_stop():
    m = Moments()
    m.add(np.array([1.0, 2.0, 0.0, 1.0]), np.array([1.0, 4.0, np.inf, np.inf]), np.array([1.0, 4.0, np.inf, np.inf]))
    assert m.never == 2
    depth, se = m.estimate("depth")
    assert depth == np.inf and np.isnan(se)
    assert m.estimate("cost")[0] == np.inf
    assert m.estimate("rate") == (0.0, 0.0)  # E[N] is infinite
    r = np.array([1.0, 0.5, 0.0, 0.0])  # G/N is 0 for a user who never stops
    assert m.estimate("mean_rate") == pytest.approx((r.mean(), r.std() / 2))
    assert m.estimate("total") == pytest.approx((1.0, np.std([1.0, 2.0, 0.0, 1.0]) / 2))
    # the engine: Robertson's AP users whose target is never retrieved read for ever
    model = model_for("AP")
    rk = rankings_from_grades("-$--", R=3)
    row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
    G, N, cost = vector.sessions(model, row, 3000, np.random.default_rng(4))
    assert np.isinf(N).any() and np.isinf(cost[np.isinf(N)]).all() and (N[np.isfinite(N)] == 2).all()
    assert abs(np.isinf(N).mean() - 2 / 3) < 0.05


@pytest.mark.parametrize("name, aggregation", [("RBP(p=0.8)", "rate"), ("AP", "mean_rate"), ("SDCG@5", "rate"),
                                               ("DCG@5", "total")])
def test_stderr_matches_the_spread_of_replications(name, aggregation):
    """The reported standard error against the empirical spread of K independent estimates.

    With K replications (independent streams), (K-1) s^2 / sigma^2 ~ chi2(K-1) if the estimates
    are near normal with sd sigma; the mean reported stderr estimates sigma far more precisely
    (each is from n users). So s / mean(stderr) must lie within the chi-square 99.9% band
    sqrt(chi2_{0.0005, K-1} / (K-1)) .. sqrt(chi2_{0.9995, K-1} / (K-1)), about 0.87..1.13 for
    K = 300, widened by 2% for the variation of the reported stderrs and delta-method bias."""
    model = model_for(name)
    rk = rankings_from_grades(SEED_RANKING, R=7)
    row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
    K, n = 300, 1000
    est, se = np.array([simulate_ranking(model, row, n, stream(k, "replication", name)).estimate(aggregation)
                        for k in range(K)]).T
    ratio = est.std(ddof=1) / se.mean()
    lo, hi = (math.sqrt(stats.chi2.ppf(q, K - 1) / (K - 1)) for q in (0.0005, 0.9995))
    assert lo * 0.98 <= ratio <= hi * 1.02, (ratio, lo, hi)
    assert se.std() / se.mean() < 0.1  # each replication's stderr is itself precise
    # and the replications centre on the exact value
    ex = exact(model, rk, "unknown").value[0, 0]
    assert abs(est.mean() - ex) / (est.std(ddof=1) / math.sqrt(K)) < 4


# ---------------------------------------------------------------------------------------------
# 5. target standard error


@pytest.mark.parametrize("engine", ["vector", "agent"])
def test_target_stderr(engine):
    model = model_for("RBP(p=0.8)")
    rk = rankings_from_grades(SEED_RANKING)
    row = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
    task = stream(13, "target")
    target = 0.004 if engine == "vector" else 0.006
    mom = simulate_ranking(model, row, 0, task, engine, target_stderr=target)
    se = mom.estimate("rate")[1]
    assert se <= target and mom.users % BLOCK == 0 and mom.users >= 2 * BLOCK
    if mom.users > 2 * BLOCK:  # one block fewer would not have reached it
        fewer = simulate_ranking(model, row, mom.users - BLOCK, task, engine)
        assert fewer.estimate("rate")[1] > target
    capped = simulate_ranking(model, row, 0, task, engine, target_stderr=1e-6, max_users=2 * BLOCK + 500)
    assert capped.users == 2 * BLOCK + 500 and capped.estimate("rate")[1] > 1e-6


def test_target_stderr_through_simulate(random_collection):
    qrels, runs = random_collection(np.random.default_rng(2021), n_runs=2, n_topics=6, negative=False)
    records = simulate(qrels, runs, ["RBP(p=0.8)", "P@5"], users=0, target_stderr=0.005, seed=3, per_topic=True)
    topics = [r for r in records if r["topic"] != "all" and r["exact"] is not None]
    assert topics and all(r["stderr"] <= 0.005 and r["users"] % BLOCK == 0 for r in topics)
    assert all(r["users"] == 2 * BLOCK for r in topics if r["measure"] == "P@5")  # exact at once
