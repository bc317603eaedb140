"""Benchmark: ``rpdi.compare`` against ranx's ``compare`` (the anchor, measured in the same run).

The task of issue 12: Fisher's randomization test with 10,000 permutations between all pairs of
RUNS runs on TOPICS topics (nDCG@10), from in-memory qrels and runs, evaluation included.
Generated with a fixed numpy seed: graded qrels and runs of DEPTH documents with distinct scores
(so that no tie-breaking convention separates the two libraries).

Both libraries get their own in-memory qrels and runs, built from the same dicts before the
clock starts (the conversion times are printed apart). Timed, best of --repeat:
(a) ranx ``compare(..., stat_test="fisher", n_permutations=10000)``: its first call on a tiny
    collection (numba compiling, or loading its on-disk cache) is reported apart, then the warm
    call on the full data;
(b) ``rpdi.compare(..., test="randomization", resamples=10000, correction="none")`` (after a
    first call on a tiny collection, for its lazy imports) with its
    default BCa bootstrap interval of every difference (work ranx does not do), and with the
    t-interval (the like-for-like task: the test alone).

It prints the times and the ratios rpdi / ranx-warm against the target (<= 0.5). The two must
agree, so it cannot be fast by being wrong: every run's mean to 1e-9, and the p-values (from
different random sign flips) within 5 binomial standard errors of each other for every pair.
Exit 0, or 1 if they disagree; without ranx it says so and exits 0.

    python tests/benchmarks/compare_speed.py --runs 100 --topics 50
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

TARGET = 0.5
B = 10_000


def generate(runs: int, topics: int, depth: int, seed: int):
    """({topic: {doc: grade}}, {run: {topic: {doc: score}}})."""
    rng = np.random.default_rng(seed)
    qrels, out = {}, {f"run{r:03d}": {} for r in range(runs)}
    quality = rng.normal(0, 1, runs)
    for t in range(topics):
        q = f"q{t}"
        docs = [f"d{t}_{i}" for i in range(3 * depth)]
        grade = np.digitize(rng.gamma(1.0, 1.0, len(docs)), [1.0, 2.0, 3.0])
        qrels[q] = {d: int(g) for d, g in zip(docs, grade)}
        for r, name in enumerate(out):
            chosen = rng.choice(len(docs), depth, replace=False)
            score = grade[chosen] * (0.3 + 0.1 * quality[r]) + rng.random(depth)  # distinct scores
            out[name][q] = {docs[i]: float(s) for i, s in zip(chosen, score)}
    return qrels, out


def best_of(repeat: int, fn):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        import ranx
    except ImportError:
        print("ranx is not importable: benchmark skipped (pip install ranx to measure the anchor)")
        return 0
    import rpdi
    from rpdi.metrics.trec import qrels_from_dict, run_from_dict

    qrels, runs = generate(args.runs, args.topics, args.depth, args.seed)
    print(f"{args.runs} runs x {args.topics} topics x {args.depth} documents, "
          f"{args.runs * (args.runs - 1) // 2} pairs, {B} permutations, nDCG@10")

    start = time.perf_counter()
    r_qrels = ranx.Qrels.from_dict(qrels)
    r_runs = [ranx.Run.from_dict(scores, name=name) for name, scores in runs.items()]
    convert_ranx = time.perf_counter() - start
    start = time.perf_counter()
    p_qrels = qrels_from_dict(qrels)
    p_runs = [run_from_dict(name, scores) for name, scores in runs.items()]
    convert_rpdi = time.perf_counter() - start
    tiny = [ranx.Run.from_dict({q: runs[name][q] for q in list(qrels)[:3]}, name=name) for name in list(runs)[:2]]
    start = time.perf_counter()
    ranx.compare(ranx.Qrels.from_dict({q: qrels[q] for q in list(qrels)[:3]}), tiny, ["ndcg@10"],
                 stat_test="fisher", n_permutations=B)
    cold = time.perf_counter() - start
    t_ranx, report = best_of(args.repeat, lambda: ranx.compare(r_qrels, r_runs, ["ndcg@10"], stat_test="fisher",
                                                                n_permutations=B, max_p=0.05))
    options = dict(test="randomization", resamples=B, correction="none")
    rpdi.compare({q: qrels[q] for q in list(qrels)[:3]}, {n: runs[n] for n in list(runs)[:2]}, ["nDCG@10"], **options)
    t_bca, recs = best_of(args.repeat, lambda: rpdi.compare(p_qrels, p_runs, ["nDCG@10"], **options))
    t_test, _ = best_of(args.repeat, lambda: rpdi.compare(p_qrels, p_runs, ["nDCG@10"], interval="t", **options))

    ok = True
    means = {r["run_a"]: r["mean_a"] for r in recs} | {r["run_b"]: r["mean_b"] for r in recs}
    worst_mean = max(abs(means[name] - report.results[name]["ndcg@10"]) for name in runs)
    if worst_mean > 1e-9:
        print(f"DISAGREEMENT: means differ by up to {worst_mean:.3g}")
        ok = False
    z = []
    for r in recs:
        p_ranx = report.comparisons[frozenset([r["run_a"], r["run_b"]])]["ndcg@10"]["p_value"]
        p = (r["p"] + p_ranx) / 2
        z.append(abs(r["p"] - p_ranx) / (np.sqrt(2 * p * (1 - p) / B) + 2 / B))
    if max(z) > 5:
        print(f"DISAGREEMENT: p-values differ by up to {max(z):.1f} standard errors")
        ok = False
    print(f"agreement: means to {worst_mean:.1g}, p-values within {max(z):.1f} standard errors")
    print(f"from dicts (not timed below): ranx {convert_ranx:.2f} s, rpdi {convert_rpdi:.2f} s")
    print(f"ranx compare: first call (numba compile or cache load) {cold:.2f} s, warm {t_ranx:.2f} s")
    for label, t in (("rpdi compare (test + BCa intervals)", t_bca), ("rpdi compare (test + t intervals)", t_test)):
        ratio = t / t_ranx
        print(f"{label}: {t:.2f} s, ratio {ratio:.2f} x ranx warm "
              f"({'meets' if ratio <= TARGET else 'misses'} the target <= {TARGET})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
