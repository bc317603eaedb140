"""How fast is exact evaluation? All core models over a 50 x 1000 array of rankings.

Prints, per model, the time of the exact evaluator (probability propagation through rank x
state) and of the closed form on the same arrays, measured in the same run, and their ratio.
Target: all core models together well under a second.

    python tests/benchmarks/exact_speed.py [--topics 50] [--depth 1000] [--seed 0]
"""

import argparse
import time

import numpy as np

from rpdi.metrics import parse_measure
from rpdi.metrics.evaluate import compute
from rpdi.metrics.rankings import Rankings
from rpdi.usermodels import exact, model_for

CORE = ["P@10", "RR", "AP", "RBP(p=0.8)", "ERR@20", "SDCG@10", "DCG@10", "nDCG@10"]


def random_rankings(topics: int, depth: int, seed: int) -> Rankings:
    rng = np.random.default_rng(seed)
    grade = rng.choice([0, 0, 0, 0, 1, 2, 3], size=(1, topics, depth)).astype(float)
    judged = rng.random((1, topics, depth)) < 0.3
    grade = np.where(judged, grade, 0.0)
    extra = rng.integers(0, 50, topics)
    ideal_lists = [np.sort(np.concatenate([grade[0, t][judged[0, t]], rng.integers(1, 4, extra[t])]))[::-1]
                   for t in range(topics)]
    M = max(len(x) for x in ideal_lists)
    ideal = np.zeros((topics, M))
    for t, x in enumerate(ideal_lists):
        ideal[t, : len(x)] = x
    n_judged = np.array([len(x) for x in ideal_lists])
    return Rankings.of_grades(grade, ideal, n_judged, 3.0, judged=judged, runs=("bench",))


def best_of(fn, repeat=3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rankings = random_rankings(args.topics, args.depth, args.seed)
    total_exact = total_closed = 0.0
    print(f"{'model':<14}{'exact (s)':>12}{'closed (s)':>12}{'ratio':>9}")
    for name in CORE:
        m = parse_measure(name)
        model = model_for(m)
        t_exact = best_of(lambda: exact(model, rankings))
        t_closed = best_of(lambda: compute(rankings, [m]))
        total_exact += t_exact
        total_closed += t_closed
        print(f"{name:<14}{t_exact:>12.4f}{t_closed:>12.4f}{t_exact / t_closed:>9.1f}")
    print(f"{'all core':<14}{total_exact:>12.4f}{total_closed:>12.4f}{total_exact / total_closed:>9.1f}")
    print(f"target: all core models well under 1 s for {args.topics} x {args.depth}: "
          f"{'met' if total_exact < 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
