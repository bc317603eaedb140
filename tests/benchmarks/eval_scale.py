"""Benchmark of issue 26: ``rpdi eval`` at four shapes (runs x topics x documents) against
pytrec_eval, trec_eval 10 and ranx, in wall time, CPU time and peak memory, and whether they agree.

The shapes, generated with a fixed seed by eval_speed.py's ``generate`` (graded qrels, ties in the
scores, lines shuffled):

- 20x50x1000 and 100x50x1000, a TREC ad hoc track: about 1,700 judged documents a topic, as the
  TREC-8 ad hoc qrels (86,830 judgments for topics 401-450);
- 10x6980x100 and 1x6980x1000, MS MARCO dev's 6,980 queries: about 200 judged a query, 1.4 M
  qrels lines, the size issue 26 measured (MS MARCO's own dev qrels judge about one passage a
  query; 200 a query loads the qrels side as a deeply judged collection would).

Every tool is a child process, timed from its start to its exit (start-up and imports counted, as
for a researcher calling it in a loop); its CPU time and peak RSS are its own, from ``os.wait4``:

- ``rpdi eval QRELS RUN... -m P@10 -m AP -m RR -m nDCG@10 -m nDCG --format json``, its bytecode
  cached as an installed package has it; and rpdi's baseline, the same on a one-line qrels and run;
- pytrec_eval: this script in a child (``--child pytrec_eval``) parsing the qrels and every run
  and evaluating them with one RelevanceEvaluator (eval_speed.py's ``pytrec_eval_all``), this
  script's imports (numpy) in its start-up;
- trec_eval 10 (built with -O2 from its source into the cache when a compiler is present, found
  by eval_speed.py's ``trec_eval_binary``): one process per run, as trec_eval takes one run; the
  walls and CPU times summed, the peak the largest of them;
- ranx, warm: a child (``--child ranx``) first reads and evaluates, untimed, the first
  WARM_LINES lines of the first run and the qrels of their topics (as it does every run: the
  qrels read once, each run read and evaluated in turn), so that numba compiles (or loads from
  its cache) every function on the path for these very types (ranx's docno arrays are typed by
  their longest docno, and numba compiles once per type); then it times itself (wall and CPU of the process,
  all numba threads) reading the qrels and each run from file and evaluating it. Its peak RSS is
  the whole child's, the warm-up included.

The rounds are interleaved (one of each tool in turn, --rounds times) so that a load on a shared
machine falls on all alike; the medians are reported. Before the rounds, rpdi runs untimed with
``--compat pytrec_eval`` and with ``--ties range``. The agreement checked, per run and measure on
the means over topics:

- pytrec_eval: within 1e-9 of ``rpdi eval --compat pytrec_eval``;
- trec_eval: its printed 4 decimals equal rpdi's value printed so;
- ranx: within 1e-6 of the interval rpdi's ``--ties range`` gives (the least and the greatest
  value over every order of the tied documents). ranx orders tied scores its own way (numba's
  quicksort of the negated scores; trec_eval sorts tied documents by docno, descending), and the
  generated runs tie on purpose, so its values lie anywhere in that interval; otherwise its
  measures are trec_eval's (``ndcg`` with linear gains, relevance = grade >= 1).

The targets of issue 26, whose ratios are printed: rpdi's peak RSS <= its baseline + 4 x (bytes
of the largest run + the qrels); its wall time <= 0.5 x pytrec_eval's and <= 0.4 x trec_eval's.
For the two shapes alike but for their number of runs, the growth of rpdi's peak per run added.
Exit status 0, or 1 on a disagreement or a failing tool (a missed target is reported, not an
error), 2 on bad arguments. Without ranx, pytrec_eval or trec_eval, one line says which anchor is
skipped and why.

    python tests/benchmarks/eval_scale.py --rounds 3 --markdown
    python tests/benchmarks/eval_scale.py --quick --rounds 1
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import NamedTuple

import numpy as np


def _sibling(name: str):
    """tests/benchmarks/NAME.py as a module (a script beside this one, not a package module)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


speed = _sibling("eval_speed")


class Shape(NamedTuple):
    runs: int
    topics: int
    depth: int
    judged: int  # about this many judged documents a topic


SHAPES = {"20x50x1000": Shape(20, 50, 1000, 1700), "100x50x1000": Shape(100, 50, 1000, 1700),
          "10x6980x100": Shape(10, 6980, 100, 200), "1x6980x1000": Shape(1, 6980, 1000, 200)}
QUICK = {"3x10x100": Shape(3, 10, 100, 60), "2x300x20": Shape(2, 300, 20, 10)}  # --quick: a smoke run
RANX_METRICS = ["precision@10", "map", "mrr", "ndcg@10", "ndcg"]  # speed.RPDI_MEASURES in ranx's names
TOOLS = ["rpdi", "baseline", "pytrec_eval", "trec_eval", "ranx"]
RSS_FACTOR, PYTREC_TARGET, TREC_TARGET = 4, 0.5, 0.4
PYTREC_TOLERANCE, RANX_TOLERANCE = 1e-9, 1e-6
WARM_LINES = 10_000
MiB = 2 ** 20


class Sample(NamedTuple):
    wall: float  # seconds
    cpu: float  # seconds, user + system
    rss: int  # bytes, peak resident set


# Linux counts the peak RSS of the process that starts a child into the child's ru_maxrss (the
# starter's memory is the child's until exec), so each tool is started by a small Python of its own
# (no site, no numpy) that waits for it with os.wait4 and writes its own wall time, CPU time and
# peak RSS; that starter's size is the floor of every peak reported (printed as "floor").
LAUNCHER = """import json, os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as fh:
    json.dump([os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024], fh)
"""


def run_child(command: list[str], env: dict | None = None) -> tuple[Sample, str]:
    """Run command to its end: its own wall time, CPU time and peak RSS (os.wait4's rusage of this
    child alone, taken by LAUNCHER) and its standard output. A failing command raises
    RuntimeError naming it."""
    with tempfile.TemporaryDirectory(prefix="rpdi-child-") as tmp:
        measured, out, err = (os.path.join(tmp, name) for name in ("measured.json", "out", "err"))
        with open(out, "wb") as fo, open(err, "wb") as fe:
            started = subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, measured, *command],
                                     stdout=fo, stderr=fe, env=env)
        status = started.returncode  # the starter's own failure: no such program
        if not status:
            with open(measured) as fh:
                status, wall, cpu, rss = json.load(fh)
        with open(out) as fh:
            output = fh.read()
        if status:
            with open(err, errors="replace") as fh:
                last = (fh.read().strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"{os.path.basename(command[0])} {' '.join(command[1:3])} ...: exit {status}: {last}")
        return Sample(wall, cpu, rss), output


def run_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def rpdi_means(output: str, key: str = "value") -> dict:
    """{(run, measure): value} of ``rpdi eval --format json``'s means; key "low"/"high" with
    ``--ties range``."""
    return {(r["run"], r["measure"]): r[key] for r in json.loads(output) if r["topic"] == "all"}


def child_means(output: str) -> dict:
    """{(run, measure): value} of a --child's output (rpdi's measure names)."""
    return {(run, measure): value for run, values in json.loads(output)["means"].items()
            for measure, value in values.items()}


def trec_eval_means(output: str, run: str) -> dict:
    """{(run, measure): printed value} of trec_eval's 'measure all value' lines, rpdi's names."""
    rpdi_name = dict(zip(speed.TREC_MEASURES, speed.RPDI_MEASURES))
    printed = {}
    for line in output.splitlines():
        measure, topic, value = line.split()
        if topic == "all" and measure in rpdi_name:
            printed[(run, rpdi_name[measure])] = value
    return printed


def agree_pytrec_eval(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= PYTREC_TOLERANCE


def agree_trec_eval(ours: float, printed: str) -> bool:
    return f"{ours:.4f}" == printed  # trec_eval prints %6.4f; both round the same double alike


def agree_ranx(interval: tuple[float, float], theirs: float) -> bool:
    low, high = interval
    return low - RANX_TOLERANCE <= theirs <= high + RANX_TOLERANCE


def disagreements(tool: str, ours: dict, theirs: dict, agree) -> list[str]:
    """One line per (run, measure) of ours that theirs lacks or that agree(ours, theirs) refuses."""
    problems = []
    for key, value in sorted(ours.items()):
        if key not in theirs:
            problems.append(f"{key[0]} {key[1]}: rpdi {value!r}, {tool} has no value")
        elif not agree(value, theirs[key]):
            problems.append(f"{key[0]} {key[1]}: rpdi {value!r}, {tool} {theirs[key]!r}")
    return problems


def pytrec_eval_child(qrels: str, runs: list[str]) -> dict:
    results = speed.pytrec_eval_all(qrels, runs)
    return {"means": {run_name(path): {ours: float(np.mean([v[theirs] for v in per_topic.values()]))
                                       for ours, theirs in zip(speed.RPDI_MEASURES, speed.TREC_MEASURES)}
                      for path, per_topic in results.items()}}


def ranx_child(qrels: str, runs: list[str]) -> dict:
    from ranx import Qrels, Run, evaluate

    def evaluate_all(qrels: str, paths: list[str]) -> dict:
        judged = Qrels.from_file(qrels, kind="trec")
        means = {}
        for path in paths:
            scores = evaluate(judged, Run.from_file(path, kind="trec"), RANX_METRICS)
            means[run_name(path)] = {ours: float(scores[theirs]) for ours, theirs in zip(speed.RPDI_MEASURES, RANX_METRICS)}
        return means

    with tempfile.TemporaryDirectory(prefix="rpdi-ranx-warm-") as tmp:  # untimed: numba compiles
        head, head_qrels = os.path.join(tmp, "head.run"), os.path.join(tmp, "head_qrels.txt")
        with open(runs[0]) as fh, open(head, "w") as out:
            lines = [line for line, _ in zip(fh, range(WARM_LINES))]
            out.writelines(lines)
        topics = {line.split(maxsplit=1)[0] for line in lines}  # ranx wants the qrels' topics = the run's
        with open(qrels) as fh, open(head_qrels, "w") as out:
            out.writelines(line for line in fh if line.split(maxsplit=1)[0] in topics)
        evaluate_all(head_qrels, [head])
    with speed.Clock() as clock:
        result = evaluate_all(qrels, runs)
    return {"means": result, "clock": [clock.wall, clock.cpu]}


CHILDREN = {"pytrec_eval": pytrec_eval_child, "ranx": ranx_child}


def child_command(tool: str, qrels: str, runs: list[str]) -> list[str]:
    return [sys.executable, os.path.abspath(__file__), "--child", tool, qrels, *runs]


def anchors(trec_eval_given: str | None) -> tuple[dict, list[str]]:
    """The anchors present ({"pytrec_eval": True, "trec_eval": binary, "ranx": True}) and one line
    for each skipped."""
    present, skipped = {}, []
    for module, hint in (("pytrec_eval", "pip install pytrec_eval-terrier"), ("ranx", "pip install ranx")):
        if importlib.util.find_spec(module) is None:
            skipped.append(f"{module}: anchor skipped: not installed ({hint})")
        else:
            present[module] = True
    binary, origin = speed.trec_eval_binary(trec_eval_given)
    if binary:
        present["trec_eval"] = binary
    else:
        skipped.append(f"trec_eval: anchor skipped: {origin}")
    return present, skipped


def one_round(qrels: str, runs: list[str], tiny: tuple[str, str], present: dict, env: dict) -> dict:
    """{tool: (Sample, means)} of one round, each tool in turn."""
    measured = {}
    sample, out = run_child(speed.rpdi_command(qrels, runs) + ["--format", "json"], env)
    measured["rpdi"] = sample, rpdi_means(out)
    measured["baseline"] = run_child(speed.rpdi_command(tiny[0], [tiny[1]]), env)[0], {}
    if "pytrec_eval" in present:
        sample, out = run_child(child_command("pytrec_eval", qrels, runs))
        measured["pytrec_eval"] = sample, child_means(out)
    if "trec_eval" in present:
        samples, printed = [], {}
        for run in runs:
            sample, out = run_child(speed.trec_eval_command(present["trec_eval"], qrels, run))
            samples.append(sample)
            printed.update(trec_eval_means(out, run_name(run)))
        total = Sample(sum(s.wall for s in samples), sum(s.cpu for s in samples), max(s.rss for s in samples))
        measured["trec_eval"] = total, printed
    if "ranx" in present:
        sample, out = run_child(child_command("ranx", qrels, runs))
        wall, cpu = json.loads(out)["clock"]
        measured["ranx"] = Sample(wall, cpu, sample.rss), child_means(out)
    return measured


def check(qrels: str, runs: list[str], measured: dict, env: dict) -> list[str]:
    """Disagreements of one round's anchors with rpdi (rpdi run again, untimed, as each needs)."""
    problems = []
    if "pytrec_eval" in measured:
        out = run_child(speed.rpdi_command(qrels, runs, compat=True), env)[1]
        problems += disagreements("pytrec_eval", rpdi_means(out), measured["pytrec_eval"][1], agree_pytrec_eval)
    if "trec_eval" in measured:
        problems += disagreements("trec_eval", measured["rpdi"][1], measured["trec_eval"][1], agree_trec_eval)
    if "ranx" in measured:
        out = run_child(speed.rpdi_command(qrels, runs) + ["--format", "json", "--ties", "range"], env)[1]
        low, high = rpdi_means(out, "low"), rpdi_means(out, "high")
        problems += disagreements("ranx", {k: (low[k], high[k]) for k in low}, measured["ranx"][1], agree_ranx)
    return problems


def median(samples: list[Sample]) -> Sample:
    return Sample(*(float(np.median([s[i] for s in samples])) for i in range(3)))


def measure_shape(name: str, shape: Shape, directory: str, rounds: int, seed: int, present: dict,
                  env: dict) -> tuple[dict, dict, list[str]]:
    """Generate the shape in directory and measure it: ({tool: median Sample}, sizes, problems)."""
    qrels, runs = speed.generate(directory, *shape, seed)
    tiny = (os.path.join(directory, "tiny_qrels.txt"), os.path.join(directory, "tiny.run"))
    with open(tiny[0], "w") as q, open(tiny[1], "w") as r:
        q.write("401 0 D401-1 1\n")
        r.write("401 Q0 D401-1 1 1.0 tiny\n")
    with open(qrels) as fh:
        qrels_lines = sum(1 for _ in fh)
    sizes = {"qrels": os.path.getsize(qrels), "run": max(os.path.getsize(r) for r in runs),
             "qrels_lines": qrels_lines}
    run_child(speed.rpdi_command(qrels, runs), env)  # untimed: writes the bytecode cache
    samples, problems = {}, []
    for round_ in range(rounds):
        measured = one_round(qrels, runs, tiny, present, env)
        if round_ == 0:
            problems = check(qrels, runs, measured, env)
        for tool, (sample, _) in measured.items():
            samples.setdefault(tool, []).append(sample)
    return {tool: median(s) for tool, s in samples.items()}, sizes, problems


def rss_target(medians: dict, sizes: dict) -> float:
    return medians["baseline"].rss + RSS_FACTOR * (sizes["run"] + sizes["qrels"])


def report(name: str, shape: Shape, medians: dict, sizes: dict, rounds: int, present: dict) -> list[str]:
    lines = [f"shape {name}: {shape.runs} runs x {shape.topics} topics x {shape.depth} documents, "
             f"{sizes['qrels_lines']:,} qrels lines (~{shape.judged} judged a topic); "
             f"largest run {sizes['run'] / MiB:.1f} MiB, qrels {sizes['qrels'] / MiB:.1f} MiB",
             f"  median of {rounds} round(s)             wall s    CPU s  peak MiB"]
    labels = {"rpdi": "rpdi eval", "baseline": "rpdi eval, one-line input",
              "pytrec_eval": "pytrec_eval (parse + evaluate)",
              "trec_eval": f"trec_eval ({shape.runs} process{'es' if shape.runs > 1 else ''})",
              "ranx": "ranx (warm; peak: whole child)"}
    for tool in TOOLS:
        if tool in medians:
            s = medians[tool]
            lines.append(f"  {labels[tool]:<32}{s.wall:8.3f} {s.cpu:8.3f} {s.rss / MiB:9.1f}")
    rpdi, target = medians["rpdi"], rss_target(medians, sizes)
    verdict = lambda ratio, bound: f"{ratio:.3f} (<= {bound}: {'met' if ratio <= bound else 'NOT met'})"
    lines.append(f"  target peak RSS {rpdi.rss / MiB:.1f} MiB <= {target / MiB:.1f} MiB (baseline "
                 f"{medians['baseline'].rss / MiB:.1f} + {RSS_FACTOR} x (run + qrels)): ratio "
                 + verdict(rpdi.rss / target, 1))
    for tool, bound in (("pytrec_eval", PYTREC_TARGET), ("trec_eval", TREC_TARGET)):
        if tool in medians:
            lines.append(f"  target wall rpdi / {tool}: " + verdict(rpdi.wall / medians[tool].wall, bound)
                         + f"; CPU {rpdi.cpu / medians[tool].cpu:.3f}")
    return lines


def growth(rows: list[tuple[str, Shape, dict, dict]]) -> list[str]:
    """How rpdi's peak grows with the number of runs: for two shapes alike but for it
    (20x50x1000, 100x50x1000), the difference of the peaks per run added, beside the size of a
    run file. Issue 26's aim is a peak bounded by the largest run, not by the number of runs."""
    lines = []
    for few, many in itertools.combinations(sorted(rows, key=lambda row: row[1].runs), 2):
        (name, shape, medians, _), (name2, shape2, medians2, sizes2) = few, many
        if shape._replace(runs=0) == shape2._replace(runs=0) and shape.runs < shape2.runs:
            added = (medians2["rpdi"].rss - medians["rpdi"].rss) / (shape2.runs - shape.runs)
            lines.append(f"rpdi's peak per run added, {name} -> {name2}: {added / 2 ** 10:+.0f} KiB "
                         f"(a run file: {sizes2['run'] / 2 ** 10:.0f} KiB)")
    return lines


def markdown(rows: list[tuple[str, Shape, dict, dict]]) -> list[str]:
    """The README's performance table: one row per shape, wall s / peak MiB of each tool."""
    head = ["shape (runs x topics x docs)", "rpdi", "rpdi baseline", "pytrec_eval", "trec_eval -O2",
            "ranx (warm)", "rpdi / pytrec_eval", "rpdi / trec_eval", "rpdi peak / target"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, _, medians, sizes in rows:
        cell = lambda t: f"{medians[t].wall:.2f} s, {medians[t].rss / MiB:.0f} MiB" if t in medians else "-"
        ratio = lambda t: f"{medians['rpdi'].wall / medians[t].wall:.2f}" if t in medians else "-"
        lines.append(f"| {name} | " + " | ".join([cell("rpdi"), cell("baseline"), cell("pytrec_eval"),
                     cell("trec_eval"), cell("ranx"), ratio("pytrec_eval"), ratio("trec_eval"),
                     f"{medians['rpdi'].rss / rss_target(medians, sizes):.2f}"]) + " |")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:  # a tool measured in a process of its own
        print(json.dumps(CHILDREN[argv[1]](argv[2], argv[3:])))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", nargs="+", metavar="SHAPE",
                   help=f"a subset of {', '.join(SHAPES)} (with --quick: of {', '.join(QUICK)})")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="small shapes, for a smoke run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", metavar="DIR", help="write the data to DIR/SHAPE and keep it")
    p.add_argument("--markdown", action="store_true", help="also print the results as a Markdown table")
    p.add_argument("--trec-eval", metavar="PATH", help="the trec_eval 10 binary (default: as eval_speed.py)")
    args = p.parse_args(argv)
    table = QUICK if args.quick else SHAPES
    unknown = [s for s in args.shapes or [] if s not in table]
    if unknown:
        p.error(f"unknown shape {unknown[0]}: choose among {', '.join(table)}")
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if args.trec_eval and not (os.path.isfile(args.trec_eval) and os.access(args.trec_eval, os.X_OK)):
        p.error(f"--trec-eval {args.trec_eval}: not an executable file")
    present, skipped = anchors(args.trec_eval)
    for line in skipped:
        print(line)
    if "trec_eval" in present:
        print(f"trec_eval: {speed.trec_eval_version(present['trec_eval'])}, {present['trec_eval']}")

    floor = run_child(["true"])[0].rss
    print(f"peak RSS floor: {floor / MiB:.1f} MiB (what `true` measures: the starter's share)")
    rows, problems = [], []
    with tempfile.TemporaryDirectory(prefix="rpdi-scale-") as tmp:
        env = speed.rpdi_environment(tmp)
        for name in args.shapes or table:
            directory = os.path.join(args.keep or tmp, name)
            os.makedirs(directory, exist_ok=True)
            try:
                medians, sizes, found = measure_shape(name, table[name], directory, args.rounds, args.seed,
                                                      present, env)
            except RuntimeError as exc:
                problems.append(f"{name}: a tool failed: {exc}")
                continue
            finally:
                if not args.keep:
                    shutil.rmtree(directory)
            print("\n".join(report(name, table[name], medians, sizes, args.rounds, present)), flush=True)
            problems += [f"{name}: {line}" for line in found]
            rows.append((name, table[name], medians, sizes))
    for line in growth(rows):
        print(line)
    if args.markdown and rows:
        print("\n" + "\n".join(markdown(rows)))
    if problems:
        print(f"DISAGREEMENT or failure ({len(problems)}):", file=sys.stderr)
        for line in problems[:20]:
            print("  " + line, file=sys.stderr)
        return 1
    checked = ", ".join(t for t in ("pytrec_eval", "trec_eval", "ranx") if t in present)
    print(f"agreement: rpdi agrees with {checked or 'no anchor'} at every shape")
    return 0


if __name__ == "__main__":
    sys.exit(main())
