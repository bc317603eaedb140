"""Where ``rpdi eval``'s time goes, at eval_scale.py's shapes: start-up, reading the qrels and the
runs, the qrels' side of the join, the docno join, sorting (ranking order and trec_eval's tie
order), filling the dense arrays, the measures and the output.

Each shape (generated with eval_scale.py's seed, or read from ``--data DIR/SHAPE`` as its
``--keep DIR`` wrote it) is evaluated by a child Python that wraps those steps of rpdi with wall
clocks and prints their sums as JSON; this script prints them side by side, in seconds and as
shares of the whole (from the child's first line to its end). A phase is the main thread's time
inside its functions: work on other threads (the next batch of runs read ahead, a batch's runs
sorted and filled each on a thread) shows as the time the main thread waits for it, in the phase
that waits ("read runs", "rankings"). "rest" is what no phase covers: start-up and imports,
argument parsing, truncation, views and records.

    python tests/benchmarks/eval_phases.py
    python tests/benchmarks/eval_phases.py --shapes 1x6980x1000 --data /tmp/scale
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time


def _sibling(name: str):
    """tests/benchmarks/NAME.py as a module (a script beside this one, not a package module)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# phase: the (module, attribute) functions whose calls it sums, as their callers look them up
PHASES = {
    "read qrels": [("rpdi.experiments.commands.eval", "collection")],
    "read runs": [("rpdi.metrics.evaluate", "run_batches")],
    "qrels side": [("rpdi.metrics.evaluate", "judgments")],  # found before the first batch (preparer)
    "docno join": [("rpdi.metrics.docnos", "DocnoTable.codes")],
    "sort": [("rpdi.metrics.rankings", "order_run")],  # ties broken too
    "rankings": [("rpdi.metrics.evaluate", "build_rankings")],  # less the two above it
    "measures": [("rpdi.metrics.evaluate", "compute")],
    "output": [("rpdi.experiments.commands.eval", "format_eval")],
}
INSIDE = {"rankings": ("docno join", "sort")}


def child(argv: list[str]) -> dict:
    """rpdi eval on argv with its phases timed: {phase: seconds} and the whole, from start-up."""
    import importlib
    import inspect
    import threading
    from collections import Counter

    spent = Counter()

    main_thread = threading.main_thread()

    def timed(function, phase):
        if inspect.isgeneratorfunction(function):  # (run_batches runs on the main thread)
            def wrapper(*args, **kwargs):
                generator = function(*args, **kwargs)
                while True:
                    start = time.perf_counter()
                    try:
                        item = next(generator)
                    except StopIteration:
                        return
                    finally:
                        spent[phase] += time.perf_counter() - start
                    yield item
        else:
            def wrapper(*args, **kwargs):
                if threading.current_thread() is not main_thread:
                    return function(*args, **kwargs)
                start = time.perf_counter()
                try:
                    return function(*args, **kwargs)
                finally:
                    spent[phase] += time.perf_counter() - start
        return wrapper

    from rpdi.experiments.allocator import no_huge_page_advice, reuse_freed_memory
    from rpdi.experiments.cli import main

    no_huge_page_advice()  # as the rpdi command has them (experiments.cli.entry)
    reuse_freed_memory()
    for phase, places in PHASES.items():
        for module, attribute in places:
            owner, _, name = attribute.rpartition(".")
            target = importlib.import_module(module)
            target = getattr(target, owner) if owner else target
            setattr(target, name, timed(getattr(target, name), phase))
    with open(os.devnull, "w") as null:
        stdout, sys.stdout = sys.stdout, null
        try:
            status = main(argv)
        finally:
            sys.stdout = stdout
    spent["whole"] = time.perf_counter() - START
    spent["status"] = status or 0
    return dict(spent)


def table(columns: dict[str, dict]) -> list[str]:
    names = [*PHASES, "rest", "whole"]
    lines = ["phase".ljust(12) + "".join(f"{shape:>22}" for shape in columns)]
    for name in names:
        cells = []
        for spent in columns.values():
            seconds = _seconds(spent, name)
            cells.append(f"{seconds:9.2f} s {100 * seconds / spent['whole']:5.1f} %")
        lines.append(name.ljust(12) + "".join(f"{c:>22}" for c in cells))
    return lines


def _seconds(spent: dict, name: str) -> float:
    if name == "rest":
        return spent["whole"] - sum(_seconds(spent, p) for p in PHASES)
    if name in INSIDE:
        return spent.get(name, 0.0) - sum(spent.get(p, 0.0) for p in INSIDE[name])
    return spent.get(name, 0.0)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1:])))
        return 0
    scale = _sibling("eval_scale")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", nargs="+", metavar="SHAPE", choices=list(scale.SHAPES), default=list(scale.SHAPES))
    p.add_argument("--data", metavar="DIR", help="read the shapes from DIR/SHAPE (eval_scale.py --keep DIR)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    columns = {}
    with tempfile.TemporaryDirectory(prefix="rpdi-phases-") as tmp:
        for name in args.shapes:
            directory = os.path.join(args.data or tmp, name)
            qrels = os.path.join(directory, "qrels.txt")
            if not os.path.exists(qrels):
                os.makedirs(directory, exist_ok=True)
                scale.speed.generate(directory, *scale.SHAPES[name], args.seed)
            runs = sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".run"))
            command = scale.speed.rpdi_command(qrels, runs)[1:]  # without the rpdi executable
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *command],
                                  capture_output=True, text=True)
            if done.returncode or json.loads(done.stdout)["status"]:
                print(f"{name}: rpdi eval failed: {done.stderr.strip()[-500:]}", file=sys.stderr)
                return 1
            columns[name] = json.loads(done.stdout)
    print("\n".join(table(columns)))
    return 0


START = time.perf_counter()  # the child's clock starts with this script

if __name__ == "__main__":
    sys.exit(main())
