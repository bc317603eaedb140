"""CAsT 2021 (real qrels, the five organisers' runs) per topic: rpdi against pytrec_eval.

Reads the CAsT 2021 data bundled with rpdi (rpdi.experiments.bundled), evaluates P@10, AP,
RR, nDCG, nDCG@10, Rprec, R@100 and Success@10 with rpdi (``compat="pytrec_eval"``: float32
scores and the 9.x interpolation, as pytrec_eval computes them) and with pytrec_eval, for every (run, topic, measure), prints how many triples were
compared and the largest absolute difference, and exits 1 if any difference exceeds 1e-9.

pytrec_eval reports the topics in both the run and the qrels; a qrels topic missing from a run
is given to it as an empty ranking (trec_eval -c: every measure 0), as rpdi evaluates it.

    python tests/checks/cast2021_vs_pytrec_eval.py [DATA_DIR] [--tolerance 1e-9]
"""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

import pytrec_eval

from rpdi.metrics import evaluate
from rpdi.metrics.trec import run_name
from rpdi.experiments.bundled import CAST2021_QRELS

# (pytrec_eval measure, rpdi measure)
MEASURES = [("P_10", "P@10"), ("map", "AP"), ("recip_rank", "RR"), ("ndcg", "nDCG"),
            ("ndcg_cut_10", "nDCG@10"), ("Rprec", "Rprec"), ("recall_100", "R@100"),
            ("success_10", "Success@10")]


def default_data_dir() -> Path:
    """The CAsT 2021 data bundled with rpdi (qrels.txt.gz, runs/*.run.gz)."""
    return Path(CAST2021_QRELS).parent


def compare(data_dir: Path, tolerance: float = 1e-9) -> tuple[int, float, list[str]]:
    """(triples compared, largest absolute difference, the triples that differ by more than
    ``tolerance``)."""
    qrels_path = data_dir / "qrels.txt.gz"
    run_paths = sorted((data_dir / "runs").glob("*.run.gz"))
    if not run_paths:
        raise SystemExit(f"{data_dir / 'runs'}: no *.run.gz files")
    with gzip.open(qrels_path, "rt") as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    requests = [theirs for theirs, _ in MEASURES]
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, requests)
    records = evaluate(str(qrels_path), [str(p) for p in run_paths], [ours for _, ours in MEASURES],
                       per_topic=True, compat="pytrec_eval")
    ours = {(r["run"], r["topic"], r["measure"]): r["value"] for r in records if r["topic"] != "all"}
    n, worst, diffs = 0, 0.0, []
    for path in run_paths:
        with gzip.open(path, "rt") as fh:
            run = pytrec_eval.parse_run(fh)
        run = {t: run.get(t, {}) for t in qrels}  # qrels topics missing from the run: empty
        theirs = evaluator.evaluate(run)
        if set(theirs) != set(qrels):
            raise SystemExit(f"{path.name}: pytrec_eval evaluated {len(theirs)} topics, qrels have {len(qrels)}")
        for topic, values in theirs.items():
            for key, name in MEASURES:
                mine = ours[run_name(path), topic, name]
                diff = abs(mine - values[key])
                n += 1
                worst = max(worst, diff)
                if not diff <= tolerance:
                    diffs.append(f"{run_name(path)} {topic} {name}: rpdi {mine!r} pytrec_eval {values[key]!r}")
    return n, worst, diffs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=default_data_dir(),
                        help="directory with qrels.txt.gz and runs/*.run.gz (default: %(default)s)")
    parser.add_argument("--tolerance", type=float, default=1e-9, help="largest allowed difference")
    args = parser.parse_args(argv)
    if not (args.data_dir / "qrels.txt.gz").is_file():
        print(f"{args.data_dir}: no qrels.txt.gz (CAsT 2021 data expected there)", file=sys.stderr)
        return 2
    n, worst, diffs = compare(args.data_dir, args.tolerance)
    print(f"compared {n} (run, topic, measure) triples; largest absolute difference {worst:.3g}")
    for line in diffs[:20]:
        print("  " + line)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
