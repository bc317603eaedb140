"""False-alarm rate of the three-way verdict, measured over many seeds, next to alpha.

Nothing is wrong in these runs (the package as it is, every model correct), so each seed whose
verdict says DISAGREE (status 1) is a false alarm. Collections:

  rare      RBP(p=0.5) on 100 topics whose only relevant document is at rank 20, 5000 users
            (P(a user reaches rank 20) = 2e-6: one user who does makes |z| ~ 10);
  cast      TREC CAsT 2021 (bundled qrels and 5 runs), the default job's measures;
  synthetic the default job's collection and measures (validate_core, vector engine).

For each it prints the false-alarm rate with its 95% Clopper-Pearson interval next to alpha,
and, for contrast, how often the first stage alone (normal z-tests with Holm: the verdict
before the confirmation stage) would have rejected, and how often the dispersion test was
screened out (so confirmed by its own bound, simulate.stats.dispersion_p), with its smallest
confirmation p-value. The exact expectations do not depend on
the seed and are computed once per collection and process.

    python tests/benchmarks/verdict_calibration.py --workers 8      # 1000 seeds each: many CPU hours
    python tests/benchmarks/verdict_calibration.py --seeds 20 --only rare   # a quick look
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.stats import binomtest

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.experiments.synthetic import synthetic_collection
from rpdi.metrics.evaluate import load_qrels, load_runs
from rpdi.metrics.rankings import build_rankings
from rpdi.simulate import three_way
from rpdi.simulate.confirm import confirmation
from rpdi.simulate.exact_checks import reading_cells
from rpdi.simulate.verdict import verdict
from rpdi.simulate.verdict_text import verdict_lines
from rpdi.usermodels import model_for

DEFAULT_MEASURES = ["P@10", "RR", "AP", "RBP(p=0.5)", "RBP(p=0.8)", "RBP(p=0.95)", "ERR@20", "SDCG@10",
                    "INST", "TBG"]


def rare_collection(topics: int = 100, rank: int = 20):
    """Each topic's only relevant document at ``rank``, below rank - 1 non-relevant ones."""
    qrels = {f"t{i}": {"rel": 1} for i in range(topics)}
    run = {f"t{i}": {**{f"d{j}": 100.0 - j for j in range(1, rank)}, "rel": 100.0 - rank}
           for i in range(topics)}
    return qrels, {"rare": run}, ["RBP(p=0.5)"]


def collections():
    q, runs = synthetic_collection(topics=30, runs=4, depth=100, seed=7)  # as validate_core
    return {"rare": rare_collection,
            "cast": lambda: (CAST2021_QRELS, cast2021_runs(), DEFAULT_MEASURES),
            "synthetic": lambda: (q, runs, DEFAULT_MEASURES)}


_EXACT = three_way.exact
_CACHE: dict = {}


def _cached_exact(model, rankings, convention="unknown", **kwargs):
    key = (id(rankings), model.measure.text, convention)
    if key not in _CACHE:
        _CACHE[key] = (rankings, _EXACT(model, rankings, convention, **kwargs))  # rankings kept alive
    return _CACHE[key][1]


_RANKINGS: dict = {}


def _verdicts(name: str, seeds: list[int], users: int, alpha: float, measures) -> list[tuple]:
    """(seed, verdict) for each seed, the data loaded and the exact values computed once."""
    three_way.exact = _cached_exact
    if name not in _RANKINGS:
        qrels, runs, default = collections()[name]()
        qrels, runs = load_qrels(qrels), load_runs(runs)
        _RANKINGS[name] = (qrels, runs, build_rankings(qrels, runs, "qrels"), default)
    qrels, runs, rankings, default = _RANKINGS[name]
    models = [model_for(m) for m in (measures or default)]
    out = []
    for seed in seeds:
        _, expectations, cells = three_way.three_way(rankings, models, users=users, seed=seed, engine="vector",
                                                           per_topic=False, convention="unknown", target_stderr=None,
                                                           max_users=users)
        cells += reading_cells(qrels, runs, rankings)
        by_measure = {m.measure.text: (m, ex) for m, ex in zip(models, expectations)}

        def confirm(cell):
            model, ex = by_measure[cell.measure]
            return confirmation(rankings, model, ex, cell, seed=seed, convention="unknown")

        out.append((seed, verdict(cells, alpha, confirm)))
    return out


def calibrate(name: str, seeds: int, users: int, alpha: float, first_seed: int, workers: int,
              measures) -> None:
    alarms = screens = 0
    dispersed = []  # the dispersion test's confirmation p-values, where it was screened out
    started = time.perf_counter()
    all_seeds = list(range(first_seed, first_seed + seeds))
    chunks = [all_seeds[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = [r for part in pool.map(_verdicts, [name] * workers, chunks, [users] * workers,
                                          [alpha] * workers, [measures] * workers) for r in part]
    for seed, v in sorted(results, key=lambda x: x[0]):
        alarms += v.status == 1
        screens += v.counts["screened"] > 0
        dispersed += [c.p_confirm for c in v.failures + v.marginal if c.kind == "spread"]
        if v.status == 1:
            print(f"  {name} seed {seed}: false alarm: {verdict_lines(v)[1:]}", flush=True)
    ci = binomtest(alarms, seeds).proportion_ci(0.95, method="exact")
    print(f"{name:10s} false-alarm rate {alarms}/{seeds} = {alarms / seeds:.4f} "
          f"(95% CI {ci.low:.4f}-{ci.high:.4f}) vs alpha {alpha:g}; first stage alone would reject "
          f"{screens}/{seeds} = {screens / seeds:.4f}; the dispersion test screened out in {len(dispersed)}/{seeds}"
          f"{f' (smallest confirmation p {min(dispersed):.3g})' if dispersed else ''}; "
          f"{time.perf_counter() - started:.0f} s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--users", type=int, default=5000)
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--only", action="append", choices=["rare", "cast", "synthetic"])
    ap.add_argument("--workers", type=int, default=1, help="processes, each taking every n-th seed")
    ap.add_argument("-m", "--measure", action="append", dest="measures",
                    help="measures for cast and synthetic (default: the default job's)")
    args = ap.parse_args()
    for name in args.only or ["rare", "cast", "synthetic"]:
        calibrate(name, args.seeds, args.users, args.alpha, args.first_seed, args.workers, args.measures)
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
