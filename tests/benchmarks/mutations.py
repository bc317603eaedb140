"""Power of the three-way verdict: plant one bug at a time in a copy of rpdi, run the default job.

Each mutation is a textual edit of one source file (asserted to match exactly once) in a
temporary copy of the package; the copy is put first on PYTHONPATH (it shadows the editable
install) and ``rpdi run validate_core`` runs on it. A mutation is *caught* only when the run
exits with status 1 AND the verdict.json it wrote says DISAGREE and names a failing cell, with
no error line on stderr; *missed* when it exits 0 with a verdict that agrees (its marginal cells
are counted); anything else (an internal error, a crash, a bad input, no verdict written, an
exit status the verdict does not explain) is an *error*, reported with its stderr line and
never counted as a catch. The unmutated copy must agree first.

    python tests/benchmarks/mutations.py            # every mutation, the default job as shipped
    python tests/benchmarks/mutations.py --quick    # fewer users (1000, agents 200): a smoke run
    python tests/benchmarks/mutations.py --only rbp-continuation --only agent-skips-first

The diversity users' mutations (``DIVERSITY``) run another job instead, ``DIVERSITY_JOB``:
rpdi.simulate on a synthetic diversity collection with ndeval's measures and intent-aware users,
its verdict judged the same way; the tie-order users' mutations (``TIES``) run ``TIES_JOB``,
rpdi.simulate with ``ties="expected"`` on a small collection with tied pairs; the mutations of
the users over uncertain grades (``UNCERTAIN``) run ``UNCERTAIN_JOB``: rpdi.simulate over the judgment
worlds of a small synthetic collection; the session users' (``SESSIONS``) run ``SESSION_JOB``, the
session users over the bundled CAsT 2021 conversations.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name -> (file, [(old, new), ...]), or a list of such pairs (one bug planted in several files);
# every old text must occur exactly once in its file
MUTATIONS = {
    "rbp-continuation-0.99p": ("usermodels/rbp.py", [
        ("return geometric(self.p, at.gain)", "return geometric(0.99 * self.p, at.gain)")]),
    "ap-target-among-R+1": ("usermodels/ap.py", [
        ("inside = (s >= 1) & (s <= R[..., None])", "inside = (s >= 0) & (s <= R[..., None])"),
        ("1.0 / np.maximum(R[..., None], 1)", "1.0 / (R[..., None] + 1)")]),
    "err-satisfaction-g/gmax": ("usermodels/err.py", [
        ("return scaled_exp_gains(np.minimum(grade, self.max_rel), self.max_rel)",
         "return np.minimum(grade, self.max_rel) / self.max_rel")]),
    "err-shared-gain-slip": ("metrics/measures/kernels.py", [
        ("return np.exp2(grade - shift) - np.exp2(-shift)", "return np.exp2(grade - shift - 1) - np.exp2(-shift - 1)")]),
    "p@k-reads-k+1": ("usermodels/precision.py", [
        ("self.before_cutoff(at.rank)", "self.before_cutoff(at.rank - 1)")]),
    "shared-discount-slip": ("metrics/measures/kernels.py", [
        ("        return 1.0 / np.log2(i + 1)", "        return 1.0 / np.log2(i + 2)")]),
    "inst-slip": ("usermodels/cwl.py", [
        ("at.rank, at.gain, at.seen,", "at.rank, at.gain, at.seen - at.gain,")]),
    "trec-tie-break-reversed": ("metrics/line_order.py", [
        ("by = np.argsort(~first)  # first bytes descending", "by = np.argsort(first)"),
        ("by[at] = members[np.lexsort((-rank, run))]", "by[at] = members[np.lexsort((rank, run))]")]),
    "stream-not-keyed-by-topic": ("metrics/seeds.py", [
        ('digest = hashlib.blake2b("\\x00".join(key).encode()',
         'digest = hashlib.blake2b("\\x00".join(key[:1] + key[2:]).encode()')]),
    "exact-variance-4x": ("usermodels/exact.py", [
        ("variance = {k: v[:S] for k, v in both.variance.items()}",
         "variance = {k: 4 * v[:S] for k, v in both.variance.items()}")]),
    "agent-skips-first-document": ("simulate/agents.py", [
        ("        g = 0.0\n        i = 0\n", "        g = 0.0\n        i = 1\n")]),
    "agent-wrong-budget-mean": ("simulate/agents.py", [
        ("rng.exponential(model.halflife / np.log(2), users)", "rng.exponential(model.halflife, users)")]),
    "tbg-model-skims-snippets": ("usermodels/tbg.py", [
        ("Branch(1 - click, 0.0, True, time=TBG_SUMMARY_TIME)", "Branch(1 - click, 0.0, True, time=0.9 * TBG_SUMMARY_TIME)")]),
    "tbg-shared-reading-time": ("metrics/measures/tbg.py", [
        ("return 0.018 * words + 7.8", "return 0.018 * words + 8.7")]),
    "exact-undefined-everywhere": ("usermodels/exact.py", [
        ("defined = mass.sum(-1) > 0", "defined = mass.sum(-1) < 0")]),
    "hit-adds-every-gain": ("usermodels/hit.py", [
        ("Branch(1.0, np.maximum(at.gain - at.best, 0.0),", "Branch(1.0, at.gain,")]),
    "tbg-budget-slip-weak-confirmation": [  # a weak bias that the first stage sees on a few cells, and a
        ("simulate/vector.py", [  # confirmation bound too conservative to confirm any of them alone
            ("pick([model.survival(b.time) for b in branches])",
             "pick([model.survival(0.97 * b.time) for b in branches])")]),
        ("simulate/confirm.py", [
            ('return bennett_p(test["d"], test["V"]', 'return bennett_p(0.25 * test["d"], test["V"]')])],
    "confirmation-reuses-first-stage-streams": ("simulate/confirm.py", [
        ('return ranking_stream(seed, run, topic, measure, engine, "confirm")',
         "return ranking_stream(seed, run, topic, measure, engine)")]),
    "insq-continuation-shared-slip": ("metrics/measures/cwl.py", [  # closed form and user share it
        ("insq = ((i + 2 * T - 1) / (i + 2 * T)) ** 2", "insq = ((i + 2 * T) / (i + 2 * T + 1)) ** 2")]),
    "err-default-max-rel-3": ("metrics/measures/err.py", [  # closed form and user read the default
        ('MeasureSpec("ERR", err, (Param("max_rel", float, 4.0,', 'MeasureSpec("ERR", err, (Param("max_rel", float, 3.0,')]),
    "bpm-reads-past-budget": ("usermodels/bpm.py", [
        ("(at.rank < self.cost_budget() + self.hc * moved)", "(at.rank <= self.cost_budget() + self.hc * moved)")]),
    "ift-rate-shared-slip": ("metrics/measures/ift.py", [  # closed form and user share it
        ("c = c * expit(-(A - seen / i) * R2 - np.log(b2))", "c = c * expit(-(A - seen / (i + 1)) * R2 - np.log(b2))")]),
    "ift-goal-shared-slip": ("metrics/measures/ift.py", [
        ("c = c * expit((T - seen) * R1 + np.log(b1))", "c = c * expit((T - seen) * R1 + np.log(1.1 * b1))")]),
    "u-reader-one-short": ("usermodels/umeasure.py", [
        ("left = self.L - at.rank", "left = self.L - at.rank - 1")]),
    "npv-discount-slip": ("usermodels/npv.py", [
        ("return 1.0 / (1.0 + self.rate)", "return 1.0 / (1.0 + 1.1 * self.rate)")]),
    "set-weights-shifted-cwl-eval": ("usermodels/set_measure.py", [  # cwl_eval's own off-by-one
        ("i = float(at.rank)", "i = float(at.rank) + 1")]),
    "two-users-per-uniform": ("simulate/vector.py", [
        ("self.rngs[r].random(out=u[begin:begin + k])",
         "u[begin:begin + k] = np.repeat(self.rngs[r].random((k + 1) // 2), 2)[:k]")]),
    # the diversity users, run on the synthetic diversity collection (DIVERSITY_JOB)
    "novelty-counted-after-the-document": ("usermodels/novelty.py", [
        ("before = np.cumsum(J, axis=-2) - J", "before = np.cumsum(J, axis=-2)")]),
    "intent-probabilities-not-normalised": [  # nobody divides: the uniform default, the mixture's weights
        ("metrics/diversity.py", [("np.where(relevant, 1.0 / np.maximum(count, 1), 0.0)",
                                   "np.where(relevant, 1.0, 0.0)")]),
        ("usermodels/mixture.py", [("return np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)",
                                    "return np.where(total > 0, w, 0.0)")])],
    # the users who read tied documents in random order, run on a collection with ties (TIES_JOB)
    "tie-order-drawn-once-per-ranking": ("simulate/ranking.py", [  # every user of a block (5000 < BLOCK) shares one
        ("v = np.minimum(np.searchsorted(cum, rng.random(users) * cum[-1]",
         "v = np.minimum(np.searchsorted(cum, np.full(users, rng.random()) * cum[-1]")]),
    "tie-orders-one-left-out": ("usermodels/tie_orders.py", [  # users and their exact value miss an order
        ("weights[s, t, :len(p)] = 1.0", "weights[s, t, :len(p) - 1] = 1.0")]),
    # the users over uncertain grades, run on a small collection of grade distributions (UNCERTAIN_JOB)
    "uncertain-grades-paired-with-reversed-probabilities": ("usermodels/uncertain_user.py", [
        ("self.table_prob = np.concatenate([q.probs,", "self.table_prob = np.concatenate([q.probs[:, ::-1],")]),
    # the session users, run on the bundled CAsT 2021 conversations (SESSION_JOB)
    "session-next-query-entered-at-its-second-document": ("usermodels/session.py", [
        ("reading = state // 2, (state % 2 == 0) | (rank == 1)", "reading = state // 2, (state % 2 == 0) | (rank == 2)")]),
    "escg-moves-on-from-the-last-rank-only-if-reading-on": ("usermodels/escg.py", [  # p_down times too many
        ("return 0.0, self.p_reform", "return 0.0, self.p_down * self.p_reform")]),
    "escg-seen-before-by-the-probability-of-moving-on": ("usermodels/escg.py", [  # unseen's probability mixed up
        ("unseen(r.grid(r.doc), self.p_down)", "unseen(r.grid(r.doc), self.p_reform)")]),
    "esdcg-path-position-not-advanced-when-moving-on": ("usermodels/esdcg.py", [  # the next turn's first document
        ("Branch(on * nxt, gain, True, read + 1)", "Branch(on * nxt, gain, True, state + 1 - state % 2)")]),
    "esndcg-worth-of-the-next-position": ("usermodels/esdcg.py", [  # the ratio's expectation one document late
        ("worth = self.table[session, turn - 1, rank - 1, np.minimum(n, last - 1)]",
         "worth = self.table[session, turn - 1, rank - 1, np.minimum(n + self.normalise, last - 1)]")]),
    "nsdcg-ideal-session-the-best-grades-of-all-turns-first": ("metrics/sessions.py", [  # not each turn's own
        ("grade = laid.turn_ideal[None]", "grade = -np.sort(-laid.turn_ideal[None], axis=-1)")]),
}
# mutations judged on the diversity job rather than validate_core (which reads no subtopics)
DIVERSITY = {"novelty-counted-after-the-document", "intent-probabilities-not-normalised"}
# mutations judged on the ties job
TIES = {"tie-order-drawn-once-per-ranking", "tie-orders-one-left-out"}
# mutations judged on the uncertain-grades job (validate_core's qrels have one grade per document)
UNCERTAIN = {"uncertain-grades-paired-with-reversed-probabilities"}
# mutations judged on the session job (the session users read conversations, not single rankings)
SESSIONS = {"session-next-query-entered-at-its-second-document", "escg-moves-on-from-the-last-rank-only-if-reading-on",
            "esdcg-path-position-not-advanced-when-moving-on", "esndcg-worth-of-the-next-position",
            "escg-seen-before-by-the-probability-of-moving-on", "nsdcg-ideal-session-the-best-grades-of-all-turns-first"}
# the uncertain-grades job: 30 topics of 6 documents, 3 of them with 2-3 grades of random probabilities,
# two runs; rpdi.simulate over judgment worlds (closed forms' expectations enumerated, users each in a
# world of their own), its verdict written as verdict.json, exit 1 on disagreement
UNCERTAIN_JOB = """
import json, os, sys
import numpy as np
from rpdi.metrics.uncertain import uncertain_from_dict
from rpdi.simulate.api import simulate
rng = np.random.default_rng(11)
qrels, runs = {}, {"a": {}, "b": {}}
for t in (f"t{i}" for i in range(30)):
    docs = [f"{t}d{i}" for i in range(6)]
    qrels[t] = {d: ({float(g): float(p) for g, p in zip(rng.choice(4, size=int(rng.integers(2, 4)), replace=False),
                                                           rng.dirichlet(np.ones(3)))} if i < 3 else int(rng.integers(0, 4)))
                for i, d in enumerate(docs)}
    qrels[t] = {d: ({g: p / sum(v.values()) for g, p in v.items()} if isinstance(v, dict) else v) for d, v in qrels[t].items()}
    for r in runs:
        runs[r][t] = {d: float(6 - k) for k, d in enumerate(rng.permutation(docs))}
measures = ["RR", "ERR@5", "DCG@5", "RR2", "RBP(p=0.8)", "P@3"]
_, verdict = simulate(uncertain_from_dict(qrels), runs, measures, users=int(sys.argv[2]), seed=20260101,
                      with_verdict=True)
os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], "verdict.json"), "w") as fh:
    json.dump(verdict.as_dict(), fh)
sys.exit(verdict.status)
"""
# the diversity job: ndeval's measures and intent-aware users on a synthetic diversity collection with
# ndeval's uniform intents, rpdi.simulate's verdict written as verdict.json, exit 1 on disagreement
DIVERSITY_JOB = """
import json, os, sys
from rpdi.experiments.synthetic_diversity import synthetic_diversity
from rpdi.simulate.api import simulate
qrels, runs, _ = synthetic_diversity(topics=20, seed=7)
measures = ["alpha-nDCG@10", "alpha-DCG@20", "NRBP", "nNRBP", "ERR-IA@20", "nERR-IA@10", "P-IA@10", "MAP-IA",
            "RBP-IA(p=0.8)", "INST-IA", "nDCG-IA@10"]
_, verdict = simulate(qrels, runs, measures, users=int(sys.argv[2]), seed=20260101, with_verdict=True)
os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], "verdict.json"), "w") as fh:
    json.dump(verdict.as_dict(), fh)
sys.exit(verdict.status)
"""

# the ties job: rpdi.simulate --ties expected on 12 topics, 2 runs whose top 8 documents come in tied pairs
# (16 orders a ranking at most) with a plugin model among the measures, its verdict written as verdict.json
TIES_JOB = """
import json, os, sys
import numpy as np
from rpdi.simulate.api import simulate
rng = np.random.default_rng(3)
qrels, runs = {}, {"a": {}, "b": {}}
for t in range(12):
    docs = [f"d{i}" for i in range(10)]
    qrels[f"q{t}"] = {d: int(g) for d, g in zip(docs, rng.choice([0, 0, 1, 2], 10))}
    for run in runs.values():
        run[f"q{t}"] = {d: float(10 - min(i, 8) // 2 - (i > 8)) for i, d in enumerate(rng.permutation(docs))}
measures = ["RBP(p=0.8)", "ERR", "INST", "RR", "nDCG@5", "rpdi.usermodels.examples.two_strikes:TwoStrikes(n=2)@10"]
_, verdict = simulate(qrels, runs, measures, users=int(sys.argv[2]), seed=20260101, with_verdict=True,
                      ties="expected")
os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], "verdict.json"), "w") as fh:
    json.dump(verdict.as_dict(), fh)
sys.exit(verdict.status)
"""


# the session job: sRBP's, sDCG's, esCG's, nsDCG's, esDCG's and esnDCG's users on the bundled CAsT 2021 runs'
# conversations (the topic ids' turns), rpdi.simulate's verdict written as verdict.json, exit 1 on disagreement
SESSION_JOB = """
import json, os, sys
from rpdi.experiments.bundled import CAST2021_QRELS, cast2021_runs
from rpdi.simulate.api import simulate_sessions
_, verdict = simulate_sessions(CAST2021_QRELS, cast2021_runs(), ["sRBP(p=0.8,b=0.6)@10", "sDCG@10", "sRBP(p=0.9,b=0.3)@20",
                                                                  "esCG@10", "nsDCG@10", "esDCG@10", "esnDCG@10"],
                               users=int(sys.argv[2]), seed=20260101, with_verdict=True)
os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], "verdict.json"), "w") as fh:
    json.dump(verdict.as_dict(), fh)
sys.exit(verdict.status)
"""


def plantings(name: str) -> list[tuple[str, list]]:
    """The (file, edits) pairs of a mutation."""
    spec = MUTATIONS[name]
    return spec if isinstance(spec, list) else [spec]


def job_of(name: str) -> str | None:
    """The job a mutation is judged on: "diversity", "ties", "uncertain", "sessions", or None (the config)."""
    jobs = {"diversity": DIVERSITY, "ties": TIES, "uncertain": UNCERTAIN, "sessions": SESSIONS}
    return next((job for job, names in jobs.items() if name in names), None)


def copy_package(dest: str) -> str:
    """A copy of the package as ``dest/rpdi`` (sources only)."""
    target = os.path.join(dest, "rpdi")
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(
        ".venv", ".git", "tests", "*.egg-info", "__pycache__", "results"))
    return target


def mutate(package: str, file: str, edits) -> None:
    path = os.path.join(package, file)
    with open(path) as fh:
        text = fh.read()
    for old, new in edits:
        if text.count(old) != 1:
            raise SystemExit(f"mutation target not found exactly once in {file}: {old!r}")
        text = text.replace(old, new)
    with open(path, "w") as fh:
        fh.write(text)


def run_default_job(dest: str, config: str, job: str | None = None, users: int = 5000) -> tuple[str, str, float]:
    """Run the job on the copy in ``dest`` (``job`` "diversity", "ties", "uncertain" or "sessions":
    that job with ``users`` per ranking; None: the config); returns (outcome, why, seconds), see
    :func:`outcome`."""
    env = dict(os.environ, PYTHONPATH=dest + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = os.path.join(dest, "out")
    started = time.perf_counter()
    if job is not None:
        argv = [sys.executable, "-c", {"diversity": DIVERSITY_JOB, "ties": TIES_JOB, "uncertain": UNCERTAIN_JOB,
                                       "sessions": SESSION_JOB}[job], out, str(users)]
    else:
        argv = [sys.executable, "-c", "import sys; from rpdi.experiments.cli import main; "
                "sys.exit(main(sys.argv[1:]))", "run", config, "--out", out, "--fresh"]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=dest)
    verdict = read_verdict(os.path.join(out, "verdict.json"))
    shutil.rmtree(out, ignore_errors=True)
    label, why = outcome(proc.returncode, verdict, proc.stderr)
    return label, why, time.perf_counter() - started


def read_verdict(path: str) -> dict | None:
    """The verdict a run wrote, or None when it wrote none (or not a whole one)."""
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def outcome(status: int, verdict: dict | None, stderr: str) -> tuple[str, str]:
    """("disagree" | "agree" | "error", why) of one run from its exit status, the verdict.json
    it wrote and its stderr. disagree: exit 1, a verdict with status 1 naming failing cells, and
    no error line (``rpdi run: ...``, or a traceback from outside the command); agree: exit 0 and
    a verdict with status 0 and no failing cell; anything else is an error, whatever its exit
    status (an internal error also exits 1)."""
    lines = stderr.strip().splitlines()
    error = next((ln for ln in lines if ln.startswith("rpdi run:")), None)
    if error is not None or verdict is None or "Traceback" in stderr:
        line = error or (lines[-1] if lines else "")  # the CLI's one line, else the exception's
        return "error", f"exit {status}, {'no' if verdict is None else 'a'} verdict written: {line[:300]}"
    failures, marginal = verdict.get("failures", []), verdict.get("marginal", [])
    if status == 1 and verdict.get("status") == 1 and failures:
        return "disagree", f"{len(failures)} failing cells, first: {cell_name(failures[0])}"
    if status == 0 and verdict.get("status") == 0 and not failures:
        first = f", first: {cell_name(marginal[0])}" if marginal else ""
        return "agree", f"{len(marginal)} marginal cells{first}"
    return "error", (f"exit {status} but the verdict says status {verdict.get('status')} with "
                     f"{len(failures)} failing cells")


def cell_name(cell: dict) -> str:
    """A verdict cell as kind, run, topic, measure (and engine where it has one)."""
    engine = f", {cell['engine']} engine" if "engine" in cell else ""
    return f"{cell['kind']}: run {cell['run']}, topic {cell['topic']}, {cell['measure']}{engine}"


def quick_config(dest: str) -> str:
    """validate_core with 1000 users per ranking and 200 per agent ranking."""
    with open(os.path.join(ROOT, "experiments", "configs", "validate_core.toml")) as fh:
        text = fh.read()
    text = text.replace("users = 5000", "users = 1000").replace("users = 300", "users = 200")
    path = os.path.join(dest, "quick.toml")
    with open(path, "w") as fh:
        fh.write(text)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer simulated users (a smoke run)")
    ap.add_argument("--only", action="append", choices=sorted(MUTATIONS), help="run only these mutations")
    ap.add_argument("--skip-clean", action="store_true", help="do not run the unmutated copy first")
    args = ap.parse_args()
    names = args.only or list(MUTATIONS)
    counts = {"caught": 0, "MISSED": 0, "error": 0}
    users = 1000 if args.quick else 5000
    with tempfile.TemporaryDirectory() as base:
        config = quick_config(base) if args.quick else "validate_core"
        jobs = list(dict.fromkeys(job_of(name) for name in names))  # the unmutated copy must agree on each job run
        for job in [] if args.skip_clean else jobs:
            with tempfile.TemporaryDirectory(dir=base) as dest:
                copy_package(dest)
                label, why, seconds = run_default_job(dest, config, job, users)
            what = f"(no mutation, {job} job)" if job else "(no mutation)"
            print(f"{what:30s} {label:8s} {seconds:5.1f}s  {why}", flush=True)
            if label != "agree":
                print("the unmutated package does not agree: mutation results would mean nothing")
                return 1
        for name in names:
            with tempfile.TemporaryDirectory(dir=base) as dest:
                package = copy_package(dest)
                for file, edits in plantings(name):
                    mutate(package, file, edits)
                label, why, seconds = run_default_job(dest, config, job_of(name), users)
            label = {"disagree": "caught", "agree": "MISSED", "error": "error"}[label]
            counts[label] += 1
            print(f"{name:30s} {label:8s} {seconds:5.1f}s  {why}", flush=True)
    print(f"\nthe verdict caught {counts['caught']} of {len(names)} planted bugs ({counts['MISSED']} missed, "
          f"{counts['error']} errors){' (quick run: fewer users)' if args.quick else ''}")
    return 0 if counts["caught"] == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
