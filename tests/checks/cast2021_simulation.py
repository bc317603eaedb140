"""CAsT 2021 (real qrels, the five organisers' runs) per topic: simulated users against the
exact expectations of their browsing models.

Runs ``simulate.simulate`` (vectorised engine by default) for P@10, RR, AP, RBP(p=0.8), ERR@20
and SDCG@10 (the log-discount user) on every (run, topic), and for each measure prints the
number of (run, topic) z-tests, the largest |z|, the number of zero-variance cases and the
verdict of Holm's step-down over all the z-tests together at alpha = 0.01. A zero-variance case
(standard error exactly 0: every simulated user ended with the same value) must equal the exact
value to 1e-12; P@10 and RR users read deterministically, so theirs must all be zero-variance.
Exits 1 on a Holm rejection or a zero-variance mismatch.

    python tests/checks/cast2021_simulation.py [DATA_DIR] [--users 20000] [--seed 0]
        [--engine vector|agent] [--convention unknown|nonrelevant|stop]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from scipy import stats

from rpdi.simulate import simulate
from rpdi.experiments.bundled import CAST2021_QRELS

MEASURES = ["P@10", "RR", "AP", "RBP(p=0.8)", "ERR@20", "SDCG@10"]
DETERMINISTIC = {"P@10", "RR"}
ALPHA = 0.01


def default_data_dir() -> Path:
    """The CAsT 2021 data bundled with rpdi (qrels.txt.gz, runs/*.run.gz)."""
    return Path(CAST2021_QRELS).parent


def holm(pvalues: list[float], alpha: float = ALPHA) -> list[int]:
    """Indices rejected by Holm's step-down procedure at family-wise level alpha."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = []
    for k, i in enumerate(order):
        if pvalues[i] > alpha / (len(pvalues) - k):
            break
        rejected.append(i)
    return rejected


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="?", type=Path, default=default_data_dir(),
                    help="directory with qrels.txt.gz and runs/*.run.gz (default: %(default)s)")
    ap.add_argument("--users", type=int, default=20_000, help="simulated users per (run, topic)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engine", default="vector", choices=["vector", "agent"])
    ap.add_argument("--convention", default="unknown", choices=["unknown", "nonrelevant", "stop"])
    args = ap.parse_args(argv)
    runs = sorted((args.data / "runs").glob("*.run.gz"))
    if not runs:
        print(f"{args.data / 'runs'}: no *.run.gz files", file=sys.stderr)
        return 2
    began = time.perf_counter()
    records = simulate(str(args.data / "qrels.txt.gz"), [str(p) for p in runs], MEASURES, users=args.users,
                       seed=args.seed, engine=args.engine, per_topic=True, convention=args.convention)
    elapsed = time.perf_counter() - began
    topics = [r for r in records if r["topic"] != "all" and r["exact"] is not None]
    tests = [r for r in topics if r["stderr"]]
    pvalues = [2 * stats.norm.sf(abs(r["z"])) for r in tests]
    rejected = {id(tests[i]) for i in holm(pvalues)}
    mismatches = []
    print(f"{len(runs)} runs, {args.users} users per (run, topic), seed {args.seed}, {args.engine} engine, "
          f"convention {args.convention}: {elapsed:.1f} s; Holm over all {len(tests)} z-tests at alpha {ALPHA}")
    print(f"{'measure':<12} {'z-tests':>7} {'max |z|':>8} {'where':<32} {'exact':>6} {'Holm':>10}")
    for m in MEASURES:
        mine = [r for r in topics if r["measure"] == m]
        zs = [r for r in mine if r["stderr"]]
        zero = [r for r in mine if not r["stderr"]]
        for r in zero:
            if abs(r["estimate"] - r["exact"]) > 1e-12:
                mismatches.append(f"{m} {r['run']}/{r['topic']}: estimate {r['estimate']!r} exact {r['exact']!r}")
        if m in DETERMINISTIC:
            mismatches += [f"{m} {r['run']}/{r['topic']}: stderr {r['stderr']} (deterministic users)" for r in zs]
        worst = max(zs, key=lambda r: abs(r["z"]), default=None)
        where = f"{worst['run']}/{worst['topic']}" if worst else "-"
        bad = sum(id(r) in rejected for r in zs)
        verdict = f"{bad} reject" if bad else "ok"
        print(f"{m:<12} {len(zs):>7} {abs(worst['z']) if worst else math.nan:>8.2f} {where:<32} {len(zero):>6} "
              f"{verdict:>10}")
    for line in mismatches:
        print("zero-variance mismatch:", line)
    failed = bool(rejected or mismatches)
    print("FAIL" if failed else "agreement: no Holm rejection, every zero-variance case exact")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
