"""CAsT 2021 with uncertain grades: how the comparison of two bundled runs changes.

The grade probabilities are SYNTHETIC, made from the bundled qrels (grades 0-4): each judged
document keeps its grade with probability 1 - 2q and moves to each neighbouring grade with
probability q (q = 0.2 by default; at the ends of the scale, 0 and 4, the grade stays with
probability 1 - q). They stand for an assessor who is off by one grade two times in five.

For each measure the script prints, for runs A and B (default: the two runs whose nDCG@3 on
the fixed grades is closest), trec_eval's numbers on the fixed grades (mean difference B - A and
the paired t-test's p over topics) and, over judgment worlds (metrics.uncertain_scores), the
expected difference, its standard deviation and 95% interval, P(B beats A), each path and the
time taken.

    python tests/checks/cast2021_uncertain.py [--q 0.2] [--samples 1000] [--a RUN --b RUN]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import os
import tempfile
import time

import numpy as np

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.metrics.evaluate import evaluate
from rpdi.metrics.significance import compare_scores
from rpdi.metrics.trec import run_name
from rpdi.metrics.uncertain import read_uncertain_qrels
from rpdi.metrics.uncertain_scores import compare, join, spread

MEASURES = ["nDCG@3", "nDCG@10", "AP", "ERR@10", "P@10", "DCG@10"]
TOP = 4  # CAsT 2021's grade scale: 0..4


def neighbour_line(grade: int, q: float) -> str:
    """The GRADES field of a document judged ``grade``: neighbours with probability q each."""
    moves = {g: q for g in (grade - 1, grade + 1) if 0 <= g <= TOP}
    moves[grade] = 1 - sum(moves.values())
    return ",".join(f"{g}:{p:g}" for g, p in sorted(moves.items()))


def write_uncertain(path: str, q: float) -> int:
    """The bundled qrels with neighbour probabilities, in the pairs format; lines written."""
    with gzip.open(CAST2021_QRELS, "rt") as src, open(path, "w") as out:
        n = 0
        for line in src:
            topic, it, docno, grade = line.split()
            out.write(f"{topic} {it} {docno} {neighbour_line(int(grade), q)}\n")
            n += 1
    return n


def per_topic(records, runs, measure):
    """(runs x topics) values from per-topic records."""
    values = {(r["run"], r["topic"]): r["value"] for r in records if r["measure"] == measure and r["topic"] != "all"}
    topics = sorted({t for _, t in values})
    return np.array([[values[run, t] for t in topics] for run in runs])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--q", type=float, default=0.2, help="probability of moving to each neighbouring grade")
    parser.add_argument("--samples", type=int, default=1000, help="worlds drawn per topic where sampled")
    parser.add_argument("--a", help="run A (a bundled run's name)")
    parser.add_argument("--b", help="run B")
    args = parser.parse_args(argv)
    paths = {run_name(p): p for p in cast2021_runs()}
    fixed = evaluate(CAST2021_QRELS, list(paths.values()), MEASURES, per_topic=True)
    if args.a and args.b:
        a, b = args.a, args.b
    else:
        means = {r["run"]: r["value"] for r in fixed if r["measure"] == MEASURES[0] and r["topic"] == "all"}
        a, b = min(itertools.combinations(sorted(means), 2), key=lambda p: abs(means[p[0]] - means[p[1]]))
        a, b = sorted((a, b), key=means.get)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "qrels-uncertain.txt")
        lines = write_uncertain(path, args.q)
        start = time.perf_counter()
        judgments = join(read_uncertain_qrels(path), [paths[a], paths[b]])
        read_time = time.perf_counter() - start
    print(f"CAsT 2021, {lines} judgments, each grade moved to a neighbour with probability {args.q:g} "
          f"(synthetic); read and joined in {read_time:.2f} s")
    print(f"A = {a}, B = {b}; {args.samples} worlds per topic where sampled\n")
    head = (f"{'measure':<9} {'fixed: B-A':>10} {'t-test p':>8} | {'E[B-A]':>8} {'sd':>7} {'95% interval':>18} "
            f"{'P(B>A)':>7} {'+-':>6} {'path':<13} {'s':>5}")
    print(head)
    print("-" * len(head))
    for measure in MEASURES:
        X = per_topic(fixed, [a, b], measure)
        t = compare_scores(X, [a, b], measure, test="t", correction="none")[0]
        start = time.perf_counter()
        c = compare(spread(judgments, measure, samples=args.samples), 0, 1)
        took = time.perf_counter() - start
        d = c.difference
        print(f"{measure:<9} {t['diff']:>+10.4f} {t['p']:>8.4f} | {d.mean:>+8.4f} {d.sd:>7.4f} "
              f"[{d.low:>+7.4f}, {d.high:>+7.4f}] {c.p_beats:>7.3f} {c.p_error:>6.3f} {c.path:<13} {took:>5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
