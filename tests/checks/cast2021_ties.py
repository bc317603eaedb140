"""How much trec_eval's docno rule for tied scores moves the bundled CAsT 2021 runs' scores.

For each of the five runs and each measure: trec_eval's value (ties broken by docno
descending), the expected value over uniformly random orders of every tie group, and the range
(the lowest and highest value over those orders), each the mean over the qrels' topics
(trec_eval -c; the topics' orders are independent, so the range of the mean is the mean of the
topics' ranges); the topics whose value the order of a tie can move ("moved"); and the paths
the expectation and the range took (metrics.ties; "unchanged": the run reads no tie).

    python tests/checks/cast2021_ties.py [--compat trec_eval|pytrec_eval] [--seed 0]

``--compat pytrec_eval`` reads scores as float32, as pytrec_eval does, which makes more ties.
"""

from __future__ import annotations

import argparse

import numpy as np

from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.metrics.evaluate import compute, expand, prepare
from rpdi.metrics.ties import expected, paths_text, span, tie_groups

MEASURES = ["P@10", "AP", "RR", "nDCG@10", "nDCG", "ERR@20", "RBP(p=0.8)", "INST", "Unj@10"]


def mean(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Each run's mean over its topics, an undefined value counting 0 (trec_eval)."""
    return np.where(present, np.nan_to_num(values), 0.0).sum(axis=-1) / present.sum(axis=-1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compat", default="trec_eval", choices=["trec_eval", "pytrec_eval"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rankings, integer = prepare(CAST2021_QRELS, cast2021_runs(), compat=args.compat)
    start, end = tie_groups(rankings)
    size = np.where(start == np.arange(rankings.depth), end - start, 0)
    print(f"CAsT 2021, {len(rankings.runs)} runs, {len(rankings.topics)} topics, scores as {args.compat} reads them")
    for s, run in enumerate(rankings.runs):
        tied = size[s][size[s] > 1]
        print(f"  {run}: {len(tied)} tie groups of {int(tied.sum())} documents (largest {int(tied.max(initial=0))})")
    print()
    print(f"{'run':<22} {'measure':<11} {'trec_eval':>9} {'expected':>9} {'min':>8} {'max':>8} "
          f"{'moved':>6}  path (expected / range)")
    measures = expand(MEASURES)
    today = compute(rankings, measures, args.compat, integer)
    for m, score in zip(measures, today):
        e = expected(rankings, m, args.compat, integer, args.seed)
        low, high, how = span(rankings, m, args.compat, integer, args.seed)
        moved = (~np.isclose(low.value, high.value, rtol=0, atol=1e-12)).sum(axis=-1)
        columns = [mean(x, rankings.present) for x in (score.value, e.score.value, low.value, high.value)]
        for s, run in enumerate(rankings.runs):
            trec, exp, lo, hi = (c[s] for c in columns)
            print(f"{run:<22} {m.text:<11} {trec:9.4f} {exp:9.4f} {lo:8.4f} {hi:8.4f} {moved[s]:6d}  "
                  f"{paths_text(e.path[s])} / {paths_text(how[s])}")


if __name__ == "__main__":
    main()
