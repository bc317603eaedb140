"""Speed of the simulation engines against bare loops measured in the same process.

  1. vectorised lockstep: user-steps per second of ``simulate.vector.sessions`` for RBP(p=0.95)
     on a 1000-document ranking, against a bare numpy lockstep loop of the same geometric
     stopping (one uniform per user per document; target ratio >= 0.5), with 10^5 users at once
     and as 20 blocks of ``BLOCK`` users, each with its own stream, which ``simulate_ranking``
     runs as the lanes of one ``simulate.vector.batch`` (the bare loop takes them one after
     another). Both draw the same numbers, so the sessions are checked to be identical;
  2. agents: sessions per second of ``simulate.agents.sessions`` for the same model, against a
     bare simpy loop (each user a process with one timeout per document and a random stop;
     target ratio >= 0.5);
  3. peak memory of 10^7 users of RBP(p=0.8) through ``simulate.simulate_ranking``: groups of
     at most ``simulate.vector.GROUP`` users keep it bounded (target: below 64 MiB of traced
     numpy/Python allocations, where unblocked arrays of 10^7 users would take ~0.4 GB);
  4. many rankings: the 790 rankings of CAsT 2021 (bundled), ``--cast-users`` users each, through
     ``simulate.vector.batch`` (all at once, as ``rpdi simulate`` and the verdict run them)
     against ``simulate.vector.sessions`` one ranking at a time, for INST and TBG (deep rankings,
     a time budget); the sessions must be identical (target ratio >= 2).

Usage: python tests/benchmarks/sim_speed.py [--users 100000] [--agents 20000] [--big 10000000]
Exits 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import simpy

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rpdi.metrics.evaluate import rankings_from_grades  # noqa: E402
from rpdi.metrics.view import View  # noqa: E402
from rpdi.simulate import agents, simulate_ranking, vector  # noqa: E402
from rpdi.metrics.seeds import stream  # noqa: E402
from rpdi.simulate.ranking import BLOCK, rankings_for  # noqa: E402
from rpdi.usermodels import model_for  # noqa: E402


def best_of(fn, repeat: int):
    """(smallest wall time, result) over ``repeat`` calls."""
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def bare_lockstep(g: np.ndarray, p: float, users: int, rng: np.random.Generator):
    """The same geometric user in a bare numpy loop: read, draw, keep those with u < p."""
    rng.random(users)  # the start-state draw the engine makes (one state here)
    G = np.zeros(users)
    N = np.zeros(users)
    alive = np.arange(users)
    i = 0
    while alive.size:
        i += 1
        gi = g[i - 1] if i <= len(g) else 0.0
        u = rng.random(alive.size)
        if gi:
            G[alive] += gi
        N[alive] = i
        alive = alive[u < p]
    return G, N


def bare_simpy(g: np.ndarray, p: float, users: int, rng: np.random.Generator):
    """The same geometric user as bare simpy processes: a timeout per document, a random stop."""
    env = simpy.Environment()
    rng.random(users)  # the start-state draw the engine makes (one state here)
    G = np.zeros(users)
    N = np.zeros(users)
    n = len(g)
    draw = rng.random

    def user(u):
        i = 0
        gain = 0.0
        while True:
            i += 1
            gain += g[i - 1] if i <= n else 0.0
            G[u] = gain
            N[u] = i
            yield env.timeout(1.0)
            if draw() >= p:
                return

    for u in range(users):
        env.process(user(u))
    env.run()
    return G, N


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=100_000, help="users of the lockstep comparison")
    ap.add_argument("--agents", type=int, default=20_000, help="users of the agent comparison")
    ap.add_argument("--big", type=int, default=10_000_000, help="users of the memory measurement")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cast-users", type=int, default=1000, help="users per ranking of the many-rankings comparison")
    args = ap.parse_args(argv)
    ok = True

    grades = (np.random.default_rng(7).random(1000) < 0.3).astype(float)
    rk = rankings_from_grades(list(grades))
    model = model_for("RBP(p=0.95)")
    ranking = rankings_for(model, View(rk, model.k), "unknown")[0, 0]
    p = 0.95

    # 1. lockstep
    t_eng, (G, N, _) = best_of(lambda: vector.sessions(model, ranking, args.users, np.random.default_rng(1)),
                               args.repeat)
    t_bare, (G0, N0) = best_of(lambda: bare_lockstep(ranking.gains, p, args.users, np.random.default_rng(1)),
                               args.repeat)
    s_eng, s_bare = N.sum() / t_eng, N0.sum() / t_bare
    ratio = s_eng / s_bare
    print(f"lockstep RBP(p=0.95), 1000 docs, {args.users} users: rpdi {s_eng / 1e6:.1f} M user-steps/s, "
          f"bare numpy {s_bare / 1e6:.1f} M/s, ratio {ratio:.2f} (target >= 0.5)")
    print(f"  same draws, same sessions: {bool(np.array_equal(N, N0) and np.array_equal(G, G0))}")
    ok &= ratio >= 0.5
    # the same as 20 blocks of BLOCK users, each with its own stream, as simulate_ranking runs them
    lanes = lambda: [(ranking, BLOCK, np.random.default_rng(b)) for b in range(20)]  # noqa: E731
    t_blk, runs = best_of(lambda: list(vector.batch(model, lanes())), args.repeat)
    t_blk0, runs0 = best_of(lambda: [bare_lockstep(ranking.gains, p, BLOCK, np.random.default_rng(b)) for b in range(20)],
                            args.repeat)
    steps = sum(r[1].sum() for r in runs)
    ratio_blk = (steps / t_blk) / (sum(r[1].sum() for r in runs0) / t_blk0)
    print(f"  in blocks of {BLOCK} users: rpdi {steps / t_blk / 1e6:.1f} M user-steps/s, "
          f"bare {sum(r[1].sum() for r in runs0) / t_blk0 / 1e6:.1f} M/s, ratio {ratio_blk:.2f} (target >= 0.5)")
    same = all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(runs, runs0))
    print(f"  same draws, same sessions: {same}")
    ok &= same and ratio_blk >= 0.5

    # 2. agents
    t_ag, (Ga, Na, _) = best_of(lambda: agents.sessions(model, ranking, args.agents, np.random.default_rng(3)),
                                args.repeat)
    t_sp, (Gs, Ns) = best_of(lambda: bare_simpy(ranking.gains, p, args.agents, np.random.default_rng(3)),
                             args.repeat)
    a_eng, a_bare = args.agents / t_ag, args.agents / t_sp
    ratio = a_eng / a_bare
    print(f"agents RBP(p=0.95), 1000 docs, {args.agents} users: rpdi {a_eng:,.0f} sessions/s "
          f"({Na.sum() / t_ag / 1e3:,.0f} k user-steps/s), bare simpy {a_bare:,.0f} sessions/s, "
          f"ratio {ratio:.2f} (target >= 0.5)")
    print(f"  same draws, same sessions: {bool(np.array_equal(Na, Ns) and np.array_equal(Ga, Gs))}")
    ok &= ratio >= 0.5

    # 3. memory
    m8 = model_for("RBP(p=0.8)")
    r8 = rankings_for(m8, View(rk, m8.k), "unknown")[0, 0]
    tracemalloc.start()
    t = time.perf_counter()
    mom = simulate_ranking(m8, r8, args.big, stream(0, "bench", "RBP(p=0.8)"))
    elapsed = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    est, se = mom.estimate("rate")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"memory: {mom.users:,} users of RBP(p=0.8) in {elapsed:.1f} s: traced peak {peak / 2**20:.1f} MiB "
          f"(target < 64), process max RSS {rss:.0f} MiB; estimate {est:.5f} +- {se:.5f}; "
          f"unblocked G, N, cost, r arrays alone would be {4 * 8 * args.big / 2**20:.0f} MiB")
    ok &= peak < 64 * 2**20
    # 4. many rankings at once
    from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
    from rpdi.metrics.evaluate import load_qrels, load_runs
    from rpdi.metrics.rankings import build_rankings
    from rpdi.simulate.ranking import block_rng

    cast = build_rankings(load_qrels(CAST2021_QRELS), load_runs(cast2021_runs()), "qrels")
    for name in ("INST", "TBG"):
        m = model_for(name)
        rows = rankings_for(m, View(cast, m.k), "unknown")
        keys = [key for key in rows if cast.present[key]]
        lanes = lambda: [(rows[key], args.cast_users, block_rng(stream(5, str(key), name), 0)) for key in keys]  # noqa: E731
        t_all, together = best_of(lambda: list(vector.batch(m, lanes())), 1)
        t_one, alone = best_of(lambda: [vector.sessions(m, *lane) for lane in lanes()], 1)
        same = all(np.array_equal(x, y) for a, b in zip(together, alone) for x, y in zip(a, b))
        print(f"many rankings, {name} on CAsT ({len(keys)} rankings x {args.cast_users} users): all at once "
              f"{t_all:.1f} s, one at a time {t_one:.1f} s, ratio {t_one / t_all:.1f} (target >= 2); "
              f"same sessions: {same}")
        ok &= same and t_one / t_all >= 2
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
