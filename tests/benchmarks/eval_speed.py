"""Benchmark: ``rpdi eval`` (a whole process, start-up included) against pytrec_eval, and
against trec_eval 10.0 as a second anchor.

Generates, in a temporary directory, RUNS runs x TOPICS topics x DEPTH documents and graded
qrels (about JUDGED judged documents per topic, grades 0-3, ties in the scores) with a fixed
numpy seed, then times, best of --repeat (the three interleaved, so that a load on a shared
machine falls on all of them alike):

(a) ``rpdi eval QRELS RUN... -m P@10 -m AP -m RR -m nDCG@10 -m nDCG`` as a subprocess, with its
    bytecode cached as an installed package has it (pip compiles it at install; the cache is
    written to the temporary directory by the first, untimed run, even where
    PYTHONDONTWRITEBYTECODE is set);
(b) pytrec_eval's ``parse_qrel`` / ``parse_run`` of the same files and one ``RelevanceEvaluator``
    evaluating every run for P_10, map, recip_rank, ndcg_cut_10 and ndcg;
(c) ``trec_eval -m P.10 -m map -m recip_rank -m ndcg_cut.10 -m ndcg QRELS RUN`` once per run
    (trec_eval takes one run). The binary is --trec-eval PATH, else $TREC_EVAL, else
    ``trec_eval`` on PATH, else one built before from trec_eval's repository in the cache
    directory, else one built now: a shallow clone of https://github.com/usnistgov/trec_eval
    (main, version 10.x) compiled with make and -O2, if git, make and a C compiler are present and the
    network answers. Without any, a one-line message says why this anchor is skipped.

It prints the wall and CPU times and both ratios, rpdi / pytrec_eval against the target (<= 0.5,
in wall time) and rpdi / trec_eval; the ratios of CPU times beside them, and the median of each
round's own ratio, move less when other programs share the machine. rpdi must agree with pytrec_eval (rpdi with ``--compat pytrec_eval``, mean per run,
to 1e-9) and with trec_eval (``--format trec``, the printed 4 decimals), so the benchmark cannot
be fast by being wrong. Exit status 0, or 1 on a disagreement (missing the target is reported,
not an error), or 2 if --trec-eval names no program.

    python tests/benchmarks/eval_speed.py --runs 20 --topics 50 --depth 1000 --judged 200
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

TARGET = 0.5
RPDI_MEASURES = ["P@10", "AP", "RR", "nDCG@10", "nDCG"]
TREC_MEASURES = ["P_10", "map", "recip_rank", "ndcg_cut_10", "ndcg"]  # pytrec_eval's names
TREC_EVAL_ARGS = ["-m", "P.10", "-m", "map", "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "ndcg"]  # the same


BLOCK = 200_000  # candidate documents generated at a time (memory of the generator, not of the data)


def generate(directory: str, runs: int, topics: int, depth: int, judged: int, seed: int):
    """Write qrels.txt and run01.run ... into directory; return (qrels path, run paths).

    Each topic has a pool of 2 x max(depth, judged) candidate documents with a latent relevance
    (gamma) and a grade 0-3 from it; about ``judged`` of them are judged, half the top of the
    latent relevance (as pooling finds) and half at random. A run retrieves ``depth`` candidates
    at random and scores them by its quality times the latent relevance plus noise, rounded so
    that scores tie. Topics are made in blocks of BLOCK candidates, so that a MS MARCO-sized shape
    (7 M run lines) takes little memory; every file lists its lines in a shuffled order within a
    block (the line order is not the ranking order)."""
    rng = np.random.default_rng(seed)
    pool = 2 * max(depth, judged)  # candidate documents per topic
    quality = rng.uniform(0.2, 2.0, size=runs)
    qrels = os.path.join(directory, "qrels.txt")
    paths = [os.path.join(directory, f"run{s + 1:02d}.run") for s in range(runs)]
    files = [open(path, "w") for path in [qrels, *paths]]
    try:
        step = max(1, BLOCK // pool)
        for first in range(0, topics, step):
            _block(rng, files, np.arange(first, min(first + step, topics)), pool, depth, judged, quality)
    finally:
        for fh in files:
            fh.close()
    return qrels, paths


def _block(rng, files, block, pool: int, depth: int, judged: int, quality) -> None:
    """Append the qrels and every run's lines of the topics ``block`` (indices from 0) to files."""
    n = len(block)
    topic_ids = np.array([str(401 + t) for t in block])
    # docnos of varied length (increasing gaps) so that byte order differs from numeric order
    ids = np.cumsum(rng.integers(1, 10 ** 7 // pool, size=(n, pool)), axis=1)
    docnos = np.char.add(np.char.add(np.char.add("D", topic_ids[:, None]), "-"), ids.astype(str))
    latent = rng.gamma(1.0, 1.0, size=(n, pool))
    grade = np.digitize(latent, [1.0, 2.0, 3.0])  # 0..3
    n_judged = np.clip(rng.normal(judged, judged / 10, size=n).astype(int), 1, pool)
    # judged: the top n_judged // 2 by latent relevance, then a random sample of the others
    by_latent = np.argsort(np.argsort(-latent, axis=1), axis=1) < (n_judged // 2)[:, None]
    key = np.where(by_latent, -1.0, rng.random((n, pool)))
    is_judged = np.argsort(np.argsort(key, axis=1), axis=1) < n_judged[:, None]
    rows, cols = np.nonzero(is_judged)
    order = rng.permutation(len(rows))
    rows, cols = rows[order], cols[order]
    _write(files[0], [topic_ids[rows], "0", docnos[rows, cols], grade[rows, cols].astype(str)])
    for s, fh in enumerate(files[1:]):
        retrieved = np.argsort(rng.random((n, pool)), axis=1)[:, :depth]  # (n, depth)
        score = quality[s] * np.take_along_axis(latent, retrieved, 1) + rng.normal(0, 1, (n, depth))
        # coarse rounding makes ties
        score = np.round(score * 10 + 50, 0 if s % 2 else 2)
        names = np.take_along_axis(docnos, retrieved, 1)
        row = np.repeat(np.arange(n), depth)
        ranking = np.lexsort((names.ravel(), -score.ravel(), row))  # by topic, score, docno
        rank = np.empty(n * depth, dtype=np.int64)
        rank[ranking] = np.tile(np.arange(1, depth + 1), n)
        order = rng.permutation(n * depth)
        _write(fh, [topic_ids[row[order]], "Q0", names.ravel()[order], rank[order].astype(str),
                    np.char.mod("%.4f", score.ravel()[order]), f"sys{s + 1}"])


def _write(fh, columns) -> None:
    line = columns[0]
    for c in columns[1:]:
        line = np.char.add(np.char.add(line, " "), c)
    fh.write("\n".join(line.tolist()) + "\n")


def rpdi_command(qrels: str, runs: list[str], compat: bool = False) -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "rpdi")
    cmd = [exe, "eval", qrels, *runs]
    for m in RPDI_MEASURES:
        cmd += ["-m", m]
    if compat:
        cmd += ["--compat", "pytrec_eval", "--format", "json"]
    return cmd


def rpdi_environment(directory: str) -> dict:
    """The environment of the rpdi subprocess: bytecode cached under ``directory``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(directory, "pycache")
    return env


TREC_EVAL_REPOSITORY = "https://github.com/usnistgov/trec_eval"


def cache_directory() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rpdi", "trec_eval-10-O2")


def trec_eval_version(binary: str) -> str:
    """What ``trec_eval -v`` prints, e.g. ``trec_eval version 10.0-rc2``."""
    done = subprocess.run([binary, "-v"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    return done.stdout.strip().splitlines()[0] if done.stdout.strip() else "(no version printed)"


def build_trec_eval(cache: str) -> tuple[str | None, str]:
    """trec_eval 10.x built from a shallow clone of its repository into ``cache`` (reused when
    built before): (binary, "") or (None, why not)."""
    binary = os.path.join(cache, "trec_eval", "trec_eval")
    if os.access(binary, os.X_OK):
        return binary, ""
    compiler = shutil.which("gcc") or shutil.which("cc")
    missing = [name for name, found in (("git", shutil.which("git")), ("make", shutil.which("make")),
                                        ("a C compiler (gcc or cc)", compiler)) if not found]
    if missing:
        return None, f"no {' and no '.join(missing)} to build it"
    source = os.path.join(cache, "trec_eval")
    shutil.rmtree(source, ignore_errors=True)
    os.makedirs(cache, exist_ok=True)
    steps = [(["git", "clone", "--quiet", "--depth", "1", TREC_EVAL_REPOSITORY, source], cache,
              f"cloning {TREC_EVAL_REPOSITORY} failed"),
             (["make", f"CC={compiler} -O2", "trec_eval"], source, "make failed")]  # its CFLAGS: -g, no -O
    for command, where, failure in steps:
        try:
            done = subprocess.run(command, cwd=where, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=120, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"{failure}: {exc}"
        if done.returncode:
            last = (done.stdout.strip().splitlines() or ["no message"])[-1]
            return None, f"{failure}: {last}"
    version = trec_eval_version(binary)
    if not version.split()[-1].startswith("10"):
        return None, f"built {version}, not 10.x"
    return binary, ""


def trec_eval_binary(given: str | None) -> tuple[str | None, str]:
    """The trec_eval 10.0 binary and where it came from, or (None, why there is none)."""
    if given:
        return given, "--trec-eval"
    if os.environ.get("TREC_EVAL"):
        return os.environ["TREC_EVAL"], "$TREC_EVAL"
    if shutil.which("trec_eval"):
        return shutil.which("trec_eval"), "PATH"
    binary, reason = build_trec_eval(cache_directory())
    return (binary, "built from source") if binary else (None, reason)


def trec_eval_command(binary: str, qrels: str, run: str) -> list[str]:
    return [binary, *TREC_EVAL_ARGS, qrels, run]


def time_trec_eval(binary: str, qrels: str, runs: list[str]) -> tuple[float, float]:
    with Clock(children=True) as clock:
        for run in runs:
            subprocess.run(trec_eval_command(binary, qrels, run), check=True, stdout=subprocess.DEVNULL)
    return clock.wall, clock.cpu


def check_trec_eval(binary: str, qrels: str, runs: list[str]) -> list[str]:
    """Runs whose ``rpdi eval --format trec`` lines differ from trec_eval's; empty if none."""
    exe = os.path.join(os.path.dirname(sys.executable), "rpdi")
    problems = []
    for run in runs:
        theirs = subprocess.run(trec_eval_command(binary, qrels, run), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if theirs.returncode or not theirs.stdout:
            reason = (theirs.stderr.decode(errors="replace").strip().splitlines() or [f"status {theirs.returncode}"])[0]
            return [f"trec_eval failed on {os.path.basename(run)}: {reason}"]
        ours = subprocess.run([exe, "eval", qrels, run, "--format", "trec", *TREC_EVAL_ARGS], check=True,
                              stdout=subprocess.PIPE).stdout
        if ours != theirs.stdout:
            pairs = zip(ours.decode().splitlines() + [""], theirs.stdout.decode().splitlines() + [""])
            mine, other = next((a, b) for a, b in pairs if a != b)
            problems.append(f"{os.path.basename(run)}: rpdi --format trec prints {mine!r} where trec_eval "
                            f"prints {other!r}")
    return problems


class Clock:
    """Wall time and CPU time (user + system) of a block: of this process, or of the child
    processes it waited for. CPU time depends less on what else the machine runs; rpdi's CPU time
    counts both of its reading threads."""

    def __init__(self, children: bool = False):
        self.children = children

    def _cpu(self) -> float:
        if not self.children:
            return time.process_time()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def __enter__(self):
        self._wall, self._start = time.perf_counter(), self._cpu()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self._wall, self._cpu() - self._start


def time_rpdi(qrels: str, runs: list[str], env: dict) -> tuple[float, float]:
    with Clock(children=True) as clock:
        subprocess.run(rpdi_command(qrels, runs), check=True, stdout=subprocess.DEVNULL, env=env)
    return clock.wall, clock.cpu


def pytrec_eval_all(qrels: str, runs: list[str]) -> dict:
    import pytrec_eval

    with open(qrels) as fh:
        qrel = pytrec_eval.parse_qrel(fh)
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, set(TREC_MEASURES))
    results = {}
    for path in runs:
        with open(path) as fh:
            run = pytrec_eval.parse_run(fh)
        results[path] = evaluator.evaluate(run)
    return results


def time_pytrec_eval(qrels: str, runs: list[str]) -> tuple[float, float]:
    with Clock() as clock:
        pytrec_eval_all(qrels, runs)
    return clock.wall, clock.cpu


def check_agreement(qrels: str, runs: list[str]) -> list[str]:
    """Differences (> 1e-9) between rpdi's and pytrec_eval's per-run means; empty if none."""
    out = subprocess.run(rpdi_command(qrels, runs, compat=True), check=True,
                         stdout=subprocess.PIPE).stdout
    rpdi = {(r["run"], r["measure"]): r["value"] for r in json.loads(out) if r["topic"] == "all"}
    reference = pytrec_eval_all(qrels, runs)
    problems = []
    for path in runs:
        name = os.path.splitext(os.path.basename(path))[0]
        per_topic = reference[path]
        for ours, theirs in zip(RPDI_MEASURES, TREC_MEASURES):
            expected = float(np.mean([v[theirs] for v in per_topic.values()]))
            got = rpdi.get((name, ours))
            if got is None or abs(got - expected) > 1e-9:
                problems.append(f"{name} {ours}: rpdi {got!r}, pytrec_eval {theirs} {expected!r}")
    return problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--topics", type=int, default=50)
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--judged", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--keep", metavar="DIR", help="write the data to DIR and keep it")
    p.add_argument("--trec-eval", metavar="PATH", help="the trec_eval 10.0 binary (default: $TREC_EVAL, "
                   "trec_eval on PATH, else built from its repository into " + cache_directory() + ")")
    args = p.parse_args(argv)
    if args.trec_eval and not (os.path.isfile(args.trec_eval) and os.access(args.trec_eval, os.X_OK)):
        print(f"--trec-eval {args.trec_eval}: not an executable file", file=sys.stderr)
        return 2
    binary, origin = trec_eval_binary(args.trec_eval)

    with tempfile.TemporaryDirectory(prefix="rpdi-bench-") as tmp:
        directory = args.keep or tmp
        os.makedirs(directory, exist_ok=True)
        qrels, runs = generate(directory, args.runs, args.topics, args.depth, args.judged, args.seed)
        print(f"data: {args.runs} runs x {args.topics} topics x {args.depth} documents, "
              f"~{args.judged} judged per topic (seed {args.seed}) in {directory}")

        problems = check_agreement(qrels, runs)
        if binary:
            problems += check_trec_eval(binary, qrels, runs)
        env = rpdi_environment(tmp)
        # warm the page cache, the bytecode cache and both code paths once, then take the best
        # of --repeat rounds, each timing all of them in turn
        time_rpdi(qrels, runs, env)
        time_pytrec_eval(qrels, runs)
        t_rpdi, t_trec, t_binary = [], [], []
        for _ in range(args.repeat):
            t_rpdi.append(time_rpdi(qrels, runs, env))
            t_trec.append(time_pytrec_eval(qrels, runs))
            if binary:
                t_binary.append(time_trec_eval(binary, qrels, runs))

    best = lambda times: tuple(min(t[i] for t in times) for i in (0, 1))  # best wall, best CPU
    (w_rpdi, c_rpdi), (w_trec, c_trec) = best(t_rpdi), best(t_trec)
    ratio = w_rpdi / w_trec
    print("seconds, best of --repeat:                  wall      CPU")
    print(f"rpdi eval (subprocess, start-up included): {w_rpdi:8.3f} {c_rpdi:8.3f}")
    print(f"pytrec_eval (parse + evaluate):            {w_trec:8.3f} {c_trec:8.3f}")
    if binary:
        w_binary, c_binary = best(t_binary)
        print(f"trec_eval (one process a run):             {w_binary:8.3f} {c_binary:8.3f}"
              f"  [{trec_eval_version(binary)}, {binary}, from {origin}]")
    print(f"ratio rpdi / pytrec_eval: {ratio:.3f}  (target <= {TARGET}: "
          f"{'met' if ratio <= TARGET else 'NOT met'}); CPU time {c_rpdi / c_trec:.3f}")
    # a slow spell of a shared machine falls on both programs of a round alike: the median of the
    # rounds' own ratios moves less than the ratio of the bests
    paired = [r[0] / t[0] for r, t in zip(t_rpdi, t_trec)]
    print(f"  median of the {len(paired)} rounds' ratios: {float(np.median(paired)):.3f} "
          f"(rounds {min(paired):.3f}-{max(paired):.3f})")
    if binary:
        print(f"ratio rpdi / trec_eval:   {w_rpdi / w_binary:.3f}; CPU time {c_rpdi / c_binary:.3f}")
    else:
        print(f"trec_eval: second anchor skipped: {origin}")
    if problems:
        print(f"DISAGREEMENT between rpdi and its anchors ({len(problems)}):", file=sys.stderr)
        for line in problems[:20]:
            print("  " + line, file=sys.stderr)
        return 1
    print(f"agreement: all {len(runs)} runs x {len(RPDI_MEASURES)} measures within 1e-9 of pytrec_eval"
          + (", trec_eval's lines identical" if binary else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
