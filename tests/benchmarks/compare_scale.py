"""Benchmark of issue 26: ``rpdi compare`` (and ``rpdi simulate``, ``rpdi run``) over more and
more runs, whose peak memory should stay about flat in their number (runs read and scored a batch
at a time; an experiment's task reads its own run).

Generated with a fixed seed by eval_speed.py's ``generate``: RUNS runs of TOPICS topics x DEPTH
documents (graded qrels, about JUDGED judged a topic, tied scores, shuffled lines); each count of
runs compared is the first N of them. Every command is a child process started by eval_scale.py's
``run_child``, which reads its own wall time and peak RSS from ``os.wait4`` (start-up and imports
counted), bytecode cached as an installed package has it:

- ``rpdi compare QRELS RUN... -m AP -m nDCG@10 --test t --format json`` (the t-test keeps the
  pairs' tests, whose number grows as N^2, from hiding the reading);
- with ``--simulate``, also ``rpdi simulate QRELS RUN... -m RBP(p=0.8) --users USERS --format json``
  (closed forms, exact expectations and, with ``--users`` above 0, as many simulated users a
  ranking: runs read, ranked, compared three ways a batch at a time, the verdict's cells kept);
- with ``--experiment``, also ``rpdi run CONFIG --out DIR``, a config of the qrels, the N runs and
  the measure ``RBP(p=0.8)`` with ``--users`` users (at least 1) and no plots: a task per run, on
  one process, each reading its own run file.

It prints, per command and N, the wall time and peak RSS, and the peak's growth per run added
(MiB per run, from the smallest N to the largest) next to one run file's size.

    python tests/benchmarks/compare_scale.py --counts 5 20 50 --simulate --experiment --users 10
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile

MiB = 1 << 20


def _sibling(name: str):
    """tests/benchmarks/NAME.py as a module (a script beside this one, not a package module)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


scale = _sibling("eval_scale")  # run_child, and eval_speed as scale.speed

COMMANDS = {"compare": ["-m", "AP", "-m", "nDCG@10", "--test", "t", "--format", "json"],
            "simulate": ["-m", "RBP(p=0.8)", "--format", "json", "--users"]}  # then --users's value


EXPERIMENT = """[experiment]
name = "scale"
users = {users}

[data]
qrels = {qrels}
runs = {runs}

[[measures]]
name = "RBP(p=0.8)"

[output]
plots = false
"""


def measure(command: str, qrels: str, runs: list[str], env: dict, users: int = 0):
    """(wall seconds, peak RSS bytes) of ``rpdi COMMAND QRELS RUNS ...`` (simulate: ``users`` a
    ranking), or of ``rpdi run`` on :data:`EXPERIMENT` (written beside the qrels)."""
    exe = os.path.join(os.path.dirname(sys.executable), "rpdi")
    if command == "run":
        directory = os.path.dirname(qrels)
        config = os.path.join(directory, f"experiment-{len(runs)}.toml")
        with open(config, "w") as fh:  # (JSON's strings and lists are TOML's)
            fh.write(EXPERIMENT.format(users=max(users, 1), qrels=json.dumps(qrels), runs=json.dumps(runs)))
        argv = [exe, "run", config, "--out", os.path.join(directory, f"experiment-{len(runs)}")]
    else:
        argv = [exe, command, qrels, *runs, *COMMANDS[command], *([str(users)] if command == "simulate" else [])]
    sample, _ = scale.run_child(argv, env)
    return sample.wall, sample.rss


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[5, 20, 50], help="numbers of runs compared")
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--judged", type=int, default=1700)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--simulate", action="store_true", help="rpdi simulate too")
    parser.add_argument("--experiment", action="store_true", help="rpdi run too")
    parser.add_argument("--users", type=int, default=0, help="rpdi simulate's (and run's, at least 1) users a ranking")
    args = parser.parse_args(argv)
    counts = sorted(args.counts)
    commands = ["compare"] + (["simulate"] if args.simulate else []) + (["run"] if args.experiment else [])
    with tempfile.TemporaryDirectory(prefix="rpdi-compare-scale-") as directory:
        qrels, runs = scale.speed.generate(directory, counts[-1], args.topics, args.depth, args.judged, args.seed)
        env = scale.speed.rpdi_environment(directory)
        size = os.path.getsize(runs[0])
        print(f"{counts[-1]} runs x {args.topics} topics x {args.depth} documents, seed {args.seed}; "
              f"a run file {size / MiB:.1f} MiB, the qrels {os.path.getsize(qrels) / MiB:.1f} MiB")
        for command in commands:
            measure(command, qrels, runs[:2], env)  # untimed: writes the bytecode cache
            peaks = {}
            for n in counts:
                wall, peaks[n] = measure(command, qrels, runs[:n], env, args.users)
                print(f"rpdi {command:8s} {n:4d} runs: wall {wall:7.2f} s   peak RSS {peaks[n] / MiB:8.1f} MiB")
            if len(counts) > 1:
                growth = (peaks[counts[-1]] - peaks[counts[0]]) / (counts[-1] - counts[0])
                print(f"rpdi {command}: peak RSS grows {growth / MiB:.2f} MiB a run added "
                      f"(a run file is {size / MiB:.2f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
