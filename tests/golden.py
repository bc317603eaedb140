"""The outputs that a change with no change of behaviour must leave byte for byte the same.

    python tests/golden.py record DIR     # before the change
    python tests/golden.py check DIR      # after it: exit 1 and the first differing lines if any

It runs the ``rpdi`` command installed beside the Python that runs it (one found first on the
PATH may be another installation) on the bundled data (CAsT 2021 qrels and runs, the Yandex click
sample): ``eval --format trec -q -m all_trec``, the JSON of every command, and the shipped
experiments' result files (the lines that state timings or versions are left out). Not a test
(it takes minutes): run it at every step of a refactoring.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib.resources import files

DATA = str(files("rpdi.experiments") / "data")
QRELS = os.path.join(DATA, "cast2021", "qrels.txt.gz")
RUNS = sorted(glob.glob(os.path.join(DATA, "cast2021", "runs", "*.run.gz")))
LOGS = os.path.join(DATA, "yandex-clicks", "sessions.txt.gz")
RPDI = shutil.which("rpdi", path=os.path.dirname(sys.executable)) or "rpdi"
OWN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "usermodels", "examples",
                   "two_strikes.py")

MEASURES = ["P@10", "R@100", "AP", "AP@100", "RR", "RR2", "CautiousRR(c=2)", "Rprec", "Success@5", "HIT@5",
            "Best@10", "DCG@10", "nDCG@10", "nDCG(dcg='exp-log2')@10", "SDCG@10", "CG@10", "SN-DCG@5",
            "SN-AP@5", "SP@10", "RBP(p=0.8)", "RBP(rel=2,p=0.9)@20", "BetaRBP", "RBP2", "ERR@20", "INST",
            "INSQ", "NERR8@10", "NERR9@10", "NERR10", "NERR11", "TBG", "F@10", "Fallout@10", "IPrec@0.3",
            "AP11pt", "SetP", "SetR", "SetF", "Bpref", "infAP", "GMAP", "RelP@10", "RBO(p=0.9)"]
SIMULATED = ["P@10", "RR", "AP", "RBP(p=0.8)", "ERR@20", "nDCG@10", "INST", "NERR11", "TBG", "BetaRBP",
             "RBP2", "CautiousRR", "HIT@5", f"{OWN}:TwoStrikes(n=2)"]

COMMANDS = {
    "eval_all_trec.txt": ["eval", QRELS, *RUNS, "-q", "-m", "all_trec", "--format", "trec"],
    "eval_all_trec_c.txt": ["eval", QRELS, *RUNS, "-q", "-c", "-m", "all_trec", "--format", "trec"],
    "eval.json": ["eval", QRELS, *RUNS, "--per-topic", "--format", "json", *[a for m in MEASURES for a in ("-m", m)]],
    "eval_table.txt": ["eval", QRELS, *RUNS, *[a for m in MEASURES for a in ("-m", m)]],
    "simulate.json": ["simulate", QRELS, RUNS[0], "--users", "300", "--seed", "3", "--per-topic", "--format", "json",
                      *[a for m in SIMULATED for a in ("-m", m)]],
    "simulate_table.txt": ["simulate", QRELS, RUNS[0], "--users", "300", "--seed", "3",
                           *[a for m in SIMULATED for a in ("-m", m)]],
    "simulate_agent.json": ["simulate", QRELS, RUNS[1], "--users", "50", "--engine", "agent", "--format", "json",
                            "-m", "RBP(p=0.8)", "-m", "TBG"],
    "compare.json": ["compare", QRELS, *RUNS, "-m", "nDCG@10", "-m", "AP", "-m", "RBP(p=0.8)", "--resamples", "2000",
                     "--discriminative-power", "--users", "200", "--format", "json"],
    "compare_table.txt": ["compare", QRELS, *RUNS, "-m", "nDCG@10", "-m", "AP", "--resamples", "2000",
                          "--test", "t", "--baseline", os.path.basename(RUNS[0]).split(".")[0]],
    "properties.json": ["properties", "-m", "P@10", "-m", "RBP(p=0.8)", "-m", "AP@10", "-m", "ERR@10",
                        "-m", f"{OWN}:TwoStrikes(n=2)@10", "--format", "json"],
    "properties_model.txt": ["properties", "-m", "RBP(p=0.8)", "-m", "INST", "--model"],
    "models.txt": ["models"],
    "measures.txt": ["measures"],
    "fit.json": ["fit", LOGS, "-m", "RBP", "-m", "PBM", "-m", "SDBN", "-m", f"{OWN}:TwoStrikes",
                 "--no-stderr", "--format", "json"],
}
EXPERIMENTS = ("validate_core", "rbp_paper", "metric_agreement", "template")
UNSTABLE = re.compile(r"\d+%\||/s\]|seconds|elapsed|version|took |\d+(\.\d+)? ?s\b|wall|rpdi \d|numpy|scipy|python",
                      re.IGNORECASE)
UNSTABLE_MARK = "(unstable line)"  # left out of the comparison: how many there are depends on the load too
RESULT_FILES = ("*.csv", "*.json", "*.md", "tasks.txt")


def _run(args: list[str], cwd: str) -> str:
    done = subprocess.run([RPDI, *args], cwd=cwd, capture_output=True, text=True)
    return _placed(f"exit {done.returncode}\n{_stable(done.stdout)}\n--- stderr\n{_stable(done.stderr)}")


def _placed(text: str) -> str:
    """The text with the checkout's and the data's folders named, not spelled (a record made in
    one checkout is checked in another)."""
    return text.replace(DATA, "DATA").replace(os.path.dirname(os.path.dirname(OWN)), "ROOT")


def _stable(text: str) -> str:
    """The text with its lines of timings, versions and progress (shown when a step is slow) marked."""
    return "\n".join(UNSTABLE_MARK if UNSTABLE.search(line) else line for line in text.splitlines())


def record(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        for name, args in COMMANDS.items():
            print(name, flush=True)
            _write(os.path.join(out, name), _run(args, work))
        for config in EXPERIMENTS:
            print(config, flush=True)
            target = os.path.join(work, config)
            text = _run(["run", config, "--out", target], work)
            _write(os.path.join(out, f"run_{config}.txt"), _stable(text.replace(target, "OUT")))
            for pattern in RESULT_FILES:
                for path in sorted(glob.glob(os.path.join(target, pattern))):
                    if os.path.basename(path) == "manifest.json":  # task timings
                        continue
                    with open(path) as f:
                        body = _placed(_stable(f.read().replace(target, "OUT")))
                    _write(os.path.join(out, f"run_{config}_{os.path.basename(path)}"), body)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def check(expected: str) -> int:
    with tempfile.TemporaryDirectory() as actual:
        record(actual)
        names = sorted(set(os.listdir(expected)) | set(os.listdir(actual)))
        bad = 0
        for name in names:
            a, b = os.path.join(expected, name), os.path.join(actual, name)
            if not (os.path.exists(a) and os.path.exists(b)):
                print(f"{name}: only in {'the record' if os.path.exists(a) else 'this run'}")
                bad += 1
                continue
            with open(a) as fa, open(b) as fb:
                old, new = ([line for line in f.read().splitlines() if line != UNSTABLE_MARK] for f in (fa, fb))
            if old != new:
                bad += 1
                first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
                print(f"{name}: differs from line {first + 1} ({len(old)} lines recorded, {len(new)} now)")
                print("\n".join(f"- {line}" for line in old[first:first + 5]))
                print("\n".join(f"+ {line}" for line in new[first:first + 5]))
        print(f"{len(names) - bad} of {len(names)} outputs the same")
        if bad and len(sys.argv) > 3:
            shutil.copytree(actual, sys.argv[3], dirs_exist_ok=True)
        return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("record", "check"):
        sys.exit(__doc__)
    sys.exit(record(sys.argv[2]) if sys.argv[1] == "record" else check(sys.argv[2]))
