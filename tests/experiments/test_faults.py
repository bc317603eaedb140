"""Failure classes under bad input and faults (issue 10): nothing wrong, nothing lost, nothing
hanging. Every test here failed on the code before the fix: stale results on resume, numeric
overflow and warnings, settings the command line let through, writing results, exceptions in
models of one's own, memory, unbounded work, and the output directory. Worker processes under
signals are tested in test_tasks.py."""

from __future__ import annotations

import contextlib
import glob
import json
import math
import os
import signal
import sys
import time
import warnings
from fractions import Fraction

import numpy as np
import pytest

from rpdi.experiments.cli import main

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 1\n2 0 d4 2\n"
RUN = "1 Q0 d1 1 3.5 t\n1 Q0 d2 2 2.5 t\n1 Q0 d3 3 1.5 t\n2 Q0 d4 1 2.0 t\n2 Q0 d1 2 1.0 t\n"

MODELS = '''
import numpy as np
from rpdi.usermodels.base import BrowsingModel, geometric


class Halves(BrowsingModel):
    aggregation = "total"

    def step(self, state, at):
        return geometric(0.5, at.gain)


class InitFails(Halves):
    def __init__(self, measure):
        raise RuntimeError("boom in init")


class StepFails(Halves):
    def step(self, state, at):
        raise RuntimeError("boom in step")


class GainsFail(Halves):
    def gains(self, grade, view):
        raise ZeroDivisionError("boom in gains")


class Overflows(Halves):
    def gains(self, grade, view):
        return np.exp2(grade * 2000.0)
'''


@pytest.fixture
def data(tmp_path):
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    (tmp_path / "r2.txt").write_text(RUN)
    (tmp_path / "models.py").write_text(MODELS)
    return tmp_path


def one_line(err, *fragments):
    assert "Traceback" not in err and err.endswith("\n") and len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, (f, err)


def config(tmp_path, measures, users=50, name="c.toml", extra=""):
    experiment = f"users = {users}\n" if users is not None else ""
    text = (f'[experiment]\nname = "t"\n{experiment}{extra}\n[data]\nqrels = "q.txt"\nruns = ["r.txt"]\n\n'
            + "".join(f'[[measures]]\nname = "{m}"\n\n' for m in measures) + "[output]\nplots = false\n")
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------ stale results on resume

def test_a_changed_input_is_computed_anew_on_resume(data, run_cli):
    cfg = config(data, ["RBP(p=0.8)", "models.py:Halves"])
    out = data / "out"
    status, first, _ = run_cli(["run", cfg, "--out", out])
    assert status == 0 and first.startswith("0 of 2 tasks reused")
    assert run_cli(["run", cfg, "--out", out])[1].startswith("2 of 2 tasks reused")
    # the qrels change in place (same path): every task is recomputed, and the results are
    # those of a fresh run on the new qrels elsewhere
    (data / "q.txt").write_text(QRELS.replace("d3 2", "d3 0"))
    status, again, _ = run_cli(["run", cfg, "--out", out])
    assert status == 0 and again.startswith("0 of 2 tasks reused")
    assert run_cli(["run", cfg, "--out", data / "fresh"])[0] == 0
    assert (out / "results.csv").read_text() == (data / "fresh" / "results.csv").read_text()
    # the model's source changes (same file name): only its task is recomputed
    (data / "models.py").write_text(MODELS.replace("geometric(0.5, at.gain)", "geometric(0.9, at.gain)"))
    status, model_changed, _ = run_cli(["run", cfg, "--out", out])
    assert status == 0 and model_changed.startswith("1 of 2 tasks reused")
    assert json.loads((out / "manifest.json").read_text())["reused"] == 1
    # the results of the earlier inputs (3 other ids) are gone; this run's 2 stay and are reused
    assert len(list((out / "tasks").iterdir())) == 2
    assert run_cli(["run", cfg, "--out", out])[1].startswith("2 of 2 tasks reused")


# ------------------------------------------------------------------ overflow and numeric warnings

def test_exp_log2_gains_of_huge_grades(tmp_path, run_cli):
    (tmp_path / "q.txt").write_text("1 0 d1 2000\n1 0 d2 1999\n2 0 d1 1024\n")
    (tmp_path / "r.txt").write_text("1 Q0 d2 1 2 t\n1 Q0 d1 2 1 t\n2 Q0 d1 1 1 t\n")
    status, out, err = run_cli(["eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m",
                                        "nDCG(dcg='exp-log2')", "--per-topic", "--format", "json"])
    assert status == 0 and err == ""
    values = {r["topic"]: r["value"] for r in json.loads(out)}
    # oracle: exact integers 2^g - 1 as fractions, only the discounts in floating point
    g1999, g2000 = 2 ** 1999 - 1, 2 ** 2000 - 1
    a = float(Fraction(g1999, g2000))
    assert values["1"] == pytest.approx((a + 1 / math.log2(3)) / (1 + a / math.log2(3)), rel=1e-12)
    assert values["2"] == 1.0  # a perfect ranking (was 0.0: 2^1024 overflowed)
    # ERR's satisfaction probability (2^g - 1) / 2^max_rel with max_rel = 2000: 1/2 - 2^-2000 for
    # the grade 1999 at rank 1 (was an overflow); ERR(max_rel=5000) is below the smallest float
    status, out, err = run_cli(["eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m", "ERR(max_rel=2000)@1",
                                        "-m", "ERR(max_rel=5000)@1", "--per-topic", "--format", "json"])
    assert status == 0 and err == ""
    err_values = {(r["measure"], r["topic"]): r["value"] for r in json.loads(out)}
    assert err_values[("ERR(max_rel=2000)@1", "1")] == 0.5
    assert err_values[("ERR(max_rel=5000)@1", "1")] == 0.0
    # the same through the browsing model, exactly and simulated
    status, out, err = run_cli(["simulate", tmp_path / "q.txt", tmp_path / "r.txt", "-m",
                                        "nDCG(dcg='exp-log2')@3", "--users", "200", "--format", "json"])
    assert status == 0 and err.startswith("verdict: AGREE") and len(err.splitlines()) == 1, err
    (rec,) = json.loads(out)
    assert rec["exact"] == pytest.approx((values["1"] + 1) / 2, rel=1e-12)
    # DCG itself is beyond float: one line naming the measure
    status, out, err = run_cli(["eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m",
                                        "DCG(dcg='exp-log2')"])
    assert status == 2 and out == ""
    one_line(err, "DCG(dcg='exp-log2')", "grade 2000")


def test_numpy_warnings_never_reach_the_terminal(data, run_cli):
    (data / "r.txt").write_text("1 Q0 d2 1 1e308 t\n1 Q0 d3 2 -1e308 t\n1 Q0 d1 3 0 t\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning that escapes would be an internal error
        status, out, err = run_cli(["eval", data / "q.txt", data / "r.txt", "-m", "RR",
                                            "--compat", "pytrec_eval", "--per-topic", "--format", "json"])
    assert status == 0 and err == ""
    # 1e308 is +inf as a float32 (as pytrec_eval stores it): d2 (non-relevant) stays first, -1e308
    # (-inf) second, d1 last: RR = 1/2 from d3
    assert {r["topic"]: r["value"] for r in json.loads(out)}["1"] == 0.5
    # a model of one's own whose gains overflow: no result, one line
    status, out, err = run_cli(["simulate", data / "q.txt", data / "r.txt", "-m",
                                        f"{data / 'models.py'}:Overflows", "--users", "10"])
    # (its infinite gains are caught by the exact evaluator's check of a model's branches: bad
    # input, naming the file, class, rank and state)
    assert status == 2 and out == ""
    one_line(err, "models.py: Overflows: at rank 1, state 0: branch 0 has gain inf, not a finite number")
    # the same in worker processes of rpdi run, where the command's own check cannot see them
    status, out, err = run_cli(["run", config(data, ["models.py:Overflows"]), "--out", data / "o",
                                        "--workers", "2"])
    assert status == 2 and out == ""
    one_line(err, "models.py: Overflows: at rank 1, state 0: branch 0 has gain inf, not a finite number")


# ------------------------------------------------------------------ settings validated alike

@pytest.mark.parametrize("flag, value, key", [
    ("--seed", "-1", "seed"), ("--target-stderr", "0", "target_stderr"),
    ("--target-stderr", "-0.5", "target_stderr"), ("--target-stderr", "nan", "target_stderr"),
    ("--max-users", "0", "max_users"), ("--users", "-3", "users"),
])
def test_command_line_settings_fail_as_the_config_does(data, flag, value, key, run_cli):
    argv = ["simulate", data / "q.txt", data / "r.txt", "-m", "P@2", "--users", "10", flag, value]
    if flag == "--max-users":
        argv += ["--target-stderr", "0.01"]
    status, out, err = run_cli(argv)
    assert status == 2 and out == ""
    one_line(err, flag)
    cli_message = err.split(f"{flag}: ", 1)[1]
    cfg = config(data, ["P@2"], users=None, extra=f"{key} = {value}\n")
    status, _, err = run_cli(["run", cfg, "--out", data / "o"])
    assert status == 2
    one_line(err, f"experiment.{key}: ")
    assert err.split(f"experiment.{key}: ", 1)[1] == cli_message
    assert not (data / "o").exists()


# ------------------------------------------------------------------ writing results

def test_closed_pipe_ends_quietly(capsys, monkeypatch):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before rpdi writes, as in `rpdi measures | true`
    with open(write, "w") as pipe:
        monkeypatch.setattr(sys, "stdout", pipe)
        assert main(["measures"]) == 0
        monkeypatch.undo()
    assert capsys.readouterr().err == ""


def test_full_disk_is_one_line(capsys, monkeypatch):
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        assert main(["measures"]) == 1
        monkeypatch.undo()
    one_line(capsys.readouterr().err, "rpdi measures", "/dev/full", "No space left")


def test_unwritable_output_directory_is_named(data, run_cli):
    cfg = config(data, ["P@2"])
    for out, why in ((cfg, "is a file"), (cfg / "sub", f"{cfg} is not a directory")):
        status, stdout, err = run_cli(["run", cfg, "--out", out])
        assert status == 2 and stdout == ""
        one_line(err, str(out), why)


@pytest.mark.parametrize("where, why", [("afile/plot.png", "afile is not a directory"),
                                        ("ro/plot.png", "ro: Permission denied")])
def test_unwritable_plots_are_refused_before_the_work(data, monkeypatch, run_cli, where, why):
    """Issue 24: ``rpdi fit --plot ro/fit.png`` fitted for minutes, then failed naming a temporary
    file, status 1. Every command's output path is checked before its work (one shared check):
    the work itself is replaced here by a failure, which must never be reached."""
    import tempfile

    from rpdi.experiments import compare_plots
    from rpdi.experiments.commands import fit

    (data / "afile").write_text("")
    (data / "ro").mkdir()
    (data / "ro").chmod(0o555)
    real = tempfile.mkstemp

    def read_only(*args, dir=None, **kwargs):  # root may write anywhere: the folder refuses as a read-only one does
        if dir is not None and os.path.basename(dir) == "ro":
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    def never(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    monkeypatch.setattr(fit, "fit_and_evaluate", never)
    monkeypatch.setattr(fit, "read_clicklog", never)
    monkeypatch.setattr(compare_plots, "forest", never)
    path = data / where
    folder = path.parent
    for argv, option, shown in (
            (["fit", data / "logs.tsv", "--plot", path], "--plot", path),
            (["explain", "RBP", "--plot", path], "--plot", path),
            (["compare", data / "q.txt", data / "r.txt", data / "r2.txt", "-m", "AP", "--plots", folder / "sub"],
             "--plots", folder / "sub")):
        status, out, err = run_cli(argv)
        assert status == 2 and out == "", (argv, err)
        one_line(err, f"rpdi {argv[0]}: {option} {shown}: cannot write there: ", why)
    assert not glob.glob(str(data / "ro" / "*")) and not glob.glob(str(data / "ro" / ".*"))


def test_a_full_disk_while_writing_results_names_the_file(data, monkeypatch, run_cli):
    from rpdi.experiments import store

    real = store.os.fsync

    def full(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("results.csv"):
            raise OSError(28, "No space left on device")
        return real(fd)

    monkeypatch.setattr(store.os, "fsync", full)
    status, out, err = run_cli(["run", config(data, ["P@2"]), "--out", data / "out"])
    assert status == 1 and out == ""
    one_line(err, str(data / "out" / "results.csv"), "No space left on device")
    assert not (data / "out" / "results.csv").exists() and not glob.glob(str(data / "out" / ".tmp-*"))


# ------------------------------------------------------------------ models of one's own

@pytest.mark.parametrize("cls, method", [("InitFails", "__init__"), ("StepFails", "step"),
                                         ("GainsFail", "gains")])
def test_exceptions_in_a_model_of_ones_own_name_measure_and_file(data, cls, method, run_cli):
    measure = f"{data / 'models.py'}:{cls}"
    for argv in (["simulate", data / "q.txt", data / "r.txt", "-m", measure, "--users", "10"],
                 ["eval", data / "q.txt", data / "r.txt", "-m", measure],
                 ["compare", data / "q.txt", data / "r.txt", data / "r2.txt", "-m", measure],
                 ["properties", "-m", measure + "@4"],
                 ["run", config(data, [f"models.py:{cls}"]), "--out", data / "o"]):
        status, out, err = run_cli(argv)
        assert status == 2 and out == "", err
        one_line(err, f"models.py:{cls}", str(data / "models.py"), f"{cls}.{method}", "boom in")


def test_eval_values_a_model_of_ones_own_by_its_exact_expectation(data, run_cli):
    """Halves reads on with probability 1/2 and totals gains grade/2: topic 1 (grades 1, 0, 2)
    0.5 + 0.25 * 1 = 0.75, topic 2 (grades 2, 1) 1 + 0.5 * 0.5 = 1.25."""
    status, out, err = run_cli(["eval", data / "q.txt", data / "r.txt", "-m", f"{data / 'models.py'}:Halves()",
                                "--per-topic", "--format", "json"])
    assert status == 0, err
    records = {r["topic"]: r for r in json.loads(out)}
    assert {t: r["method"] for t, r in records.items()} == {"1": "exact", "2": "exact", "all": "exact"}
    assert {t: r["value"] for t, r in records.items()} == pytest.approx({"1": 0.75, "2": 1.25, "all": 1.0}, abs=1e-12)


def test_compare_validates_seed_and_users_as_simulate_does(data, run_cli):
    for flag, value in (("--seed", "-1"), ("--users", "-2")):
        messages = []
        for command in ("simulate", "compare"):
            status, out, err = run_cli([command, data / "q.txt", data / "r.txt", data / "r.txt",
                                                "-m", "P@2", flag, value])
            assert status == 2 and out == ""
            one_line(err, flag)
            messages.append(err.split(": ", 1)[1])
        assert messages[0] == messages[1]


def test_help_says_models_of_ones_own_execute_code(run_cli):
    for command in ("simulate", "properties", "run"):
        status, out, _ = run_cli([command, "--help"])
        assert status == 0 and "EXECUTES PYTHON CODE" in " ".join(out.split())


# ------------------------------------------------------------------ memory

def test_what_is_too_big_is_named(data, run_cli):
    status, out, err = run_cli(["eval", "/dev/zero", data / "r.txt", "-m", "P@2"])
    assert status == 2
    one_line(err, "/dev/zero", "device")
    (data / "huge.toml").write_text('[experiment]\nname = "h"\n[data.synthetic]\ndepth = 100000000000\n'
                                    '[[measures]]\nname = "P@10"\n')
    status, out, err = run_cli(["run", data / "huge.toml", "--out", data / "o"])
    assert status == 2
    one_line(err, "data.synthetic", "topics x runs x depth")


def test_property_search_is_chunked_and_sampled_when_deep(monkeypatch):
    from itertools import product

    from rpdi.metrics import properties as props

    chunks, how = props.binary_chunks(13, 2.0)
    rows = np.concatenate(list(chunks()))
    assert max(len(c) for c in chunks()) <= props.CHUNK and how.startswith("exhaustive")
    assert np.array_equal(rows, np.array(list(product((0.0, 2.0), repeat=13))))
    chunks, how = props.binary_chunks(40, 1.0)
    assert how.startswith("sampled") and max(len(c) for c in chunks()) <= props.CHUNK
    assert sum(len(c) for c in chunks()) == props.SAMPLED + 41
    # sampled search finds what the exhaustive one finds (P@k and RR@k, Moffat's Table 2)
    for measure in ("P@9", "RR@9"):
        scorer = props.closed_form_scorer(measure)
        full = props.analyse(scorer, k=9, grades=(0, 1), samples=200)
        monkeypatch.setattr(props, "EXHAUSTIVE_DEPTH", 6)
        monkeypatch.setattr(props, "SAMPLED", 512)
        monkeypatch.setattr(props, "CHUNK", 128)
        sampled = props.analyse(scorer, k=9, grades=(0, 1), samples=200)
        monkeypatch.undo()
        assert full.search.startswith("exhaustive") and sampled.search.startswith("sampled")
        assert sampled.verdicts == full.verdicts


def test_properties_table_says_when_search_is_sampled(monkeypatch, run_cli):
    from rpdi.metrics import properties as props

    monkeypatch.setattr(props, "EXHAUSTIVE_DEPTH", 6)
    monkeypatch.setattr(props, "SAMPLED", 256)
    status, out, err = run_cli(["properties", "-m", "P@8", "-m", "RR@5"])
    assert status == 0 and err == ""
    assert "P@8: sampled: 2^8 binary rankings are too many" in out
    assert "RR@5: sampled" not in out


# ------------------------------------------------------------------ unbounded work

@contextlib.contextmanager
def deadline(seconds):
    def fail(*_):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_unbounded_work_is_refused_with_the_estimate(data, monkeypatch, run_cli):
    from rpdi.metrics.errors import InputError
    from rpdi.simulate import simulate, work

    with deadline(20):
        # P@3 reads exactly 3 documents: 10^12 users x 2 rankings x 3 = 6e12 steps
        with pytest.raises(InputError, match=r"about 6e\+12 user-document steps"):
            simulate(data / "q.txt", [data / "r.txt"], ["P@3"], users=10 ** 12)
        # the agent engine is slower: its limit is lower (2 x 10^7 users: 1.2e8 steps)
        with pytest.raises(InputError, match=r"about 1.2e\+08 user-document steps .* agent engine"):
            simulate(data / "q.txt", [data / "r.txt"], ["P@3"], users=2 * 10 ** 7, engine="agent")
        status, out, err = run_cli(["simulate", data / "q.txt", data / "r.txt", "-m", "P@3",
                                            "--users", 10 ** 12])
        assert status == 2
        one_line(err, "about 6e+12 user-document steps", "--force")
        status, out, err = run_cli(["run", config(data, ["P@3"], users=10 ** 12), "--out", data / "o"])
        assert status == 2
        one_line(err, "about 6e+12", "force = true")
    monkeypatch.setattr(work, "TIME_LIMIT", 1e-6)
    with pytest.raises(InputError):
        simulate(data / "q.txt", [data / "r.txt"], ["P@3"], users=10)
    assert simulate(data / "q.txt", [data / "r.txt"], ["P@3"], users=10, force=True)[0]["users"] == 10  # per topic


def test_an_unreachable_target_stderr_lets_the_cap_bind(data, run_cli):
    """``--target-stderr 1e-300 --max-users N``: the cap binds, the standard errors achieved are
    reported, no numeric error. Before: "numeric error: divide by zero encountered in divide
    (work.py:39)", status 1, and with --format json after the verdict's "AGREE" line on stderr."""
    argv = ["simulate", data / "q.txt", data / "r.txt", "-m", "RBP(p=0.8)", "--target-stderr", "1e-300",
            "--max-users", "20000", "--seed", "3"]
    status, out, err = run_cli(argv)
    assert status == 0 and err == "", err
    cap = [line for line in out.splitlines() if "--max-users" in line]
    assert len(cap) == 1 and cap[0].startswith("RBP(p=0.8): --max-users 20000 bound on 2 of 2 rankings "
                                               "before --target-stderr 1e-300 was reached"), out
    status, out, err = run_cli(argv + ["--per-topic", "--format", "json"])
    assert status == 0
    records = [r for r in json.loads(out) if r["topic"] != "all"]
    assert [r["users"] for r in records] == [20000, 20000]
    low, high = sorted(r["stderr"] for r in records)
    # the one line on the cap (with the standard errors achieved, as the records give them) and the verdict
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0] == cap[0].split(" their standard errors")[0] + (
        f" their standard errors are {low:.3g} to {high:.3g}") and lines[1].startswith("verdict: AGREE"), err


def test_nothing_but_the_error_when_a_result_is_withheld(data, monkeypatch, run_cli):
    """A numeric warning withholds the result: then no verdict is printed either, not even on
    stderr with --format json (two contradicting lines, "AGREE" and "numeric error")."""
    from rpdi.simulate import runs

    real = runs.simulate_runs

    def warns(*args, **kwargs):
        warnings.warn("divide by zero encountered in divide", RuntimeWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr("rpdi.simulate.api.simulate_runs", warns)
    status, out, err = run_cli(["simulate", data / "q.txt", data / "r.txt", "-m", "RBP(p=0.8)", "--users", "20",
                                "--format", "json"])
    assert status == 1 and out == ""
    one_line(err, "numeric error: divide by zero encountered in divide")


def test_progress_lines_when_stderr_is_not_a_terminal(data, monkeypatch, run_cli):
    from rpdi.simulate import progress

    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)
    status, out, err = run_cli(["simulate", data / "q.txt", data / "r.txt", "-m", "RBP(p=0.9)",
                                        "-m", "P@2", "--users", "20000"])
    assert status == 0 and out
    lines = err.splitlines()
    assert "\r" not in err and any("4/4" in line for line in lines), err
    assert all("ranking" in line for line in lines)


# ------------------------------------------------------------------ the output directory

def test_a_second_run_on_the_same_output_is_refused(data, run_cli):
    from rpdi.experiments.experiment import output_lock

    cfg = config(data, ["P@2"])
    out = data / "out"
    with output_lock(str(out)):
        status, stdout, err = run_cli(["run", cfg, "--out", out, "--fresh"])
    assert status == 2 and stdout == ""
    one_line(err, str(out), "another rpdi run")
    assert not (out / "results.csv").exists()
    assert run_cli(["run", cfg, "--out", out])[0] == 0  # the lock is released


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_result_files_follow_the_umask(data, umask, mode, run_cli):
    old = os.umask(umask)
    try:
        assert run_cli(["run", config(data, ["P@2"]), "--out", data / "out"])[0] == 0
    finally:
        os.umask(old)
    files = [data / "out" / "results.csv", data / "out" / "manifest.json", *(data / "out" / "tasks").iterdir()]
    for path in files:
        assert os.stat(path).st_mode & 0o777 == mode, path


def test_compare_users_refuses_unbounded_simulation_before_starting(data, run_cli):
    """compare --users simulates where outcome distributions are not finite (TBG's time budget):
    the same work estimate as rpdi simulate refuses 10^12 users at once, with the estimate."""
    (data / "r2.txt").write_text("1 Q0 d1 1 3 u\n1 Q0 d2 2 2 u\n2 Q0 d9 1 1 u\n")
    started = time.perf_counter()
    status, out, err = run_cli(["compare", data / "q.txt", data / "r.txt", data / "r2.txt",
                                        "-m", "TBG", "--users", "1000000000000", "--resamples", "10"])
    assert status == 2 and out == ""
    one_line(err, "simulation too large", "steps", "--force")
    assert time.perf_counter() - started < 30
