"""The task executor under faults (issues 10 and 24): local worker processes never outlive the
run that started them, and SIGTERM stops a run as Ctrl-C does.

The runs are started forked (as a shell job: the leader of its own process group), so that
nothing is imported again; every wait is bounded. Each test here failed on the code before its
fix: workers that inherited a blocked or ignored SIGTERM from their parent survived its death
(they were armed with SIGTERM as their parent-death signal) and kept its standard output open,
and SIGTERM ended a run with no word.

Then ``--scheduler`` against a real Dask cluster: a scheduler and workers started by the tests as
separate processes (``python -m dask scheduler|worker``) on 127.0.0.1, on ports the system picks,
every wait bounded and every process killed at the end. A model of one's own whose tasks wait a
half a second in the cluster's workers (and not elsewhere) gives the faults time to strike mid-run.
Before the fix, a lost scheduler ended the run with Dask's tracebacks on stderr and
"internal error: FutureCancelledError" (or CommClosedError).

And a run at a time (issue 26): a task reads the qrels and its own run file, planning lets go of
each run it checks, and a run's tasks follow one another, so that a process holds one run, not
every run of the config. These tests failed on the code that read and kept every run, where a
table file of two runs was an internal error.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

import rpdi.experiments.tasks as executor
from rpdi.experiments.cli import main
from rpdi.experiments.config import load_config
from rpdi.experiments.experiment import run_experiment
from rpdi.experiments.tasks import _worker_start

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups via /proc")

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 d 2\n"
RUN = "1 Q0 a 1 3.5 t\n1 Q0 b 2 2.5 t\n1 Q0 c 3 1.5 t\n2 Q0 d 1 2.0 t\n2 Q0 a 2 1.0 t\n"


@pytest.fixture
def slow_run(tmp_path):
    """``rpdi run`` with two workers on two quick tasks (P@1 reads one document) and two that
    would take minutes (RBP(p=0.999), 200,000 users); its output directory; stderr's file."""
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    (tmp_path / "c.toml").write_text(
        '[experiment]\nname = "t"\nusers = 200000\n\n[data]\nqrels = "q.txt"\nruns = ["r.txt"]\n\n'
        '[[measures]]\nname = "P@1"\n\n[[measures]]\nname = "RBP(p=0.999)"\n\n[output]\nplots = false\n')
    out = tmp_path / "out"
    return ["run", str(tmp_path / "c.toml"), "--out", str(out), "--workers", "2"], out, tmp_path / "err.txt"


def _state(pid: int) -> str | None:
    """A process's state letter (R, S, Z, ...), None when there is none."""
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    return text[text.rindex(")") + 2]


def _live() -> list[tuple[int, int, int]]:
    """(pid, parent pid, process group) of every live (not zombie) process."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            text = open(stat).read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if fields[0] != "Z":
            found.append((int(stat.split("/")[2]), int(fields[1]), int(fields[2])))
    return found


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    return [child for child, parent, _ in _live() if parent == pid]


def _in_group(pgid: int) -> int:
    """Live (not zombie) processes of a process group."""
    return sum(group == pgid for _, _, group in _live())


def _wait(condition, seconds):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def _start(argv, err_path, stdout: int | None = None, sigterm: str = "default") -> int:
    """``main(argv)`` in a forked child leading its own process group (as a shell job), stderr
    to ``err_path``, stdout to the file descriptor ``stdout`` (else /dev/null); ``sigterm``
    "blocked" or "ignored" starts it as a supervisor may (dispositions and the signal mask are
    inherited across exec)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 1
        try:
            os.setsid()
            os.dup2(os.open(os.devnull, os.O_WRONLY) if stdout is None else stdout, 1)
            os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            if sigterm == "blocked":
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            elif sigterm == "ignored":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            status = main(argv)
            sys.stderr.flush()
        finally:
            os._exit(status)
    return pid


def _exit_status(pid: int, seconds: float):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped already
            return None
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    return None


@contextlib.contextmanager
def _started(argv, err_path, **how):
    """A run started by :func:`_start`, its whole process group killed on the way out."""
    pid = _start(argv, err_path, **how)
    try:
        yield pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        _exit_status(pid, 5)


def _one_line(err: str, *fragments: str) -> None:
    assert "Traceback" not in err and err.endswith("\n") and len(err.splitlines()) == 1, err
    assert all(f in err for f in fragments), (fragments, err)


def _stored(out) -> list[str]:
    return glob.glob(str(out / "tasks" / "*.json"))


def test_ctrl_c_stops_the_workers_at_once_keeping_finished_tasks(slow_run):
    argv, out, err = slow_run
    with _started(argv, err) as pid:
        assert _wait(lambda: len(_stored(out)) >= 1, 30)
        assert _wait(lambda: _in_group(pid) == 3, 30)  # the parent and two busy workers
        started = time.monotonic()
        os.killpg(pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
        assert _exit_status(pid, 10) == 130
        assert time.monotonic() - started < 3
        _one_line(err.read_text(), "interrupted", "finished tasks are kept")
        assert _wait(lambda: _in_group(pid) == 0, 3)
        assert len(_stored(out)) >= 1 and not glob.glob(str(out / "tasks" / ".tmp-*"))


def test_sigterm_stops_the_run_as_ctrl_c_does(slow_run):
    argv, out, err = slow_run
    with _started(argv, err) as pid:
        assert _wait(lambda: len(_stored(out)) >= 1, 30)
        assert _wait(lambda: _in_group(pid) == 3, 30)
        started = time.monotonic()
        os.kill(pid, signal.SIGTERM)  # `kill PID`: the parent only
        assert _exit_status(pid, 10) == 128 + signal.SIGTERM
        assert time.monotonic() - started < 3
        _one_line(err.read_text(), "rpdi run: terminated (SIGTERM)", "finished tasks are kept")
        assert _wait(lambda: _in_group(pid) == 0, 3)
        assert len(_stored(out)) >= 1 and not glob.glob(str(out / "tasks" / ".tmp-*"))


def test_a_worker_killed_is_one_line_not_a_wait_for_ever(slow_run):
    """A local worker killed (the OOM killer, ``kill -9``) while it computes: its task is lost,
    and the run ends at once with one line, exit 1, the finished tasks kept."""
    argv, out, err = slow_run
    with _started(argv, err) as pid:
        assert _wait(lambda: len(_stored(out)) >= 1, 30)
        assert _wait(lambda: _in_group(pid) == 3, 30)
        os.kill(_children(pid)[0], signal.SIGKILL)
        assert _exit_status(pid, 10) == 1
        _one_line(err.read_text(), "rpdi run: --workers 2: a worker process died", "finished tasks are kept")
        assert _wait(lambda: _in_group(pid) == 0, 3)
        assert len(_stored(out)) >= 1 and not glob.glob(str(out / "tasks" / ".tmp-*"))


@pytest.mark.parametrize("sigterm", ["default", "blocked", "ignored"])
def test_workers_die_with_the_parent_and_release_its_stdout(slow_run, sigterm):
    """The parent killed outright (SIGKILL), whatever SIGTERM disposition it was started with:
    its workers follow it, and a pipeline reading its standard output sees the end."""
    argv, out, err = slow_run
    read_end, write_end = os.pipe()
    try:
        with _started(argv, err, stdout=write_end, sigterm=sigterm) as pid:
            os.close(write_end)
            write_end = None
            assert _wait(lambda: len(_stored(out)) >= 1, 30)
            assert _wait(lambda: _in_group(pid) == 3, 30)
            os.kill(pid, signal.SIGKILL)
            assert _exit_status(pid, 10) == -signal.SIGKILL
            assert _wait(lambda: _in_group(pid) == 0, 3), f"{_in_group(pid)} processes outlive the run"
            assert select.select([read_end], [], [], 3)[0] and os.read(read_end, 1) == b""  # end of file
    finally:
        os.close(read_end)
        if write_end is not None:
            os.close(write_end)


def test_a_worker_notices_its_parent_is_gone_without_a_death_signal():
    """Where there is no parent-death signal (not Linux), a worker polls for its parent: here a
    worker started as on macOS outlives its parent by at most a second."""
    read_end, write_end = os.pipe()
    parent = os.fork()
    if parent == 0:  # a stand-in for rpdi: it starts a worker, passes its pid on once armed, and dies
        try:
            armed_read, armed_write = os.pipe()
            if os.fork() == 0:
                try:
                    sys.platform = "darwin"
                    _worker_start(os.getppid())
                    os.write(armed_write, f"{os.getpid()}\n".encode())
                    time.sleep(30)
                finally:
                    os._exit(0)
            os.write(write_end, os.read(armed_read, 64))
        finally:
            os._exit(0)
    os.close(write_end)
    worker = None
    try:
        assert select.select([read_end], [], [], 10)[0]
        worker = int(os.read(read_end, 64))
        assert _exit_status(parent, 10) == 0
        assert _wait(lambda: _state(worker) in (None, "Z"), 3), "the worker outlives its parent"
    finally:
        os.close(read_end)
        if worker is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)


# ------------------------------------------------------------------ a run at a time (issue 26)

RUN2 = "1 Q0 c 1 2.0 u\n1 Q0 a 2 2.0 u\n2 Q0 a 1 1.0 u\n2 Q0 e 2 0.5 u\n"


@pytest.fixture
def three_runs(tmp_path):
    """A config of qrels, three run files and two measures (P@2 and RBP, 50 users); the run files."""
    (tmp_path / "q.txt").write_text(QRELS)
    runs = [tmp_path / name for name in ("r1.txt", "r2.txt", "r3.txt")]
    for path, text in zip(runs, (RUN, RUN2, RUN.replace(" t\n", " v\n").replace("3.5", "0.5"))):
        path.write_text(text)
    (tmp_path / "c.toml").write_text(
        '[experiment]\nname = "t"\nusers = 50\n\n[data]\nqrels = "q.txt"\nruns = ["r1.txt", "r2.txt", "r3.txt"]\n\n'
        '[[measures]]\nname = "P@2"\n\n[[measures]]\nname = "RBP(p=0.8)"\n\n[output]\nplots = false\n')
    return tmp_path / "c.toml", runs


def _runs_alive(paths) -> list[str]:
    """The sources of the :class:`~metrics.trec.Run` objects alive in this process read from ``paths``."""
    import gc

    from rpdi.metrics.trec import Run

    gc.collect()
    wanted = {str(p) for p in paths}
    return sorted(o.source for o in gc.get_objects() if isinstance(o, Run) and o.source in wanted)


def _fresh_process() -> None:
    """What a new worker process starts with: no qrels or run kept from before."""
    executor._load.cache_clear()
    executor._run.cache_clear()


def test_a_task_reads_its_own_run_file_and_no_other(three_runs):
    """A task (a measure on a run) reads the qrels and its own run: in a fresh process, a task
    of r1 gives the same result when r2 has become unreadable since planning. Before, every
    task read every run of the config."""
    config, runs = three_runs
    tasks = executor.plan(load_config(str(config))[0])
    first = next(t for t in tasks if t["run"] == "r1" and t["measure"] == "RBP(p=0.8)")
    _fresh_process()
    expected = executor.run_task(first)
    runs[1].write_text("not a run line\n")
    _fresh_process()
    got = executor.run_task(first)
    assert {**got, "seconds": 0} == {**expected, "seconds": 0}


def test_a_run_holds_one_run_at_a_time(three_runs, monkeypatch):
    """Planning reads each run file to check it and lets go of it; the tasks of one run are
    computed one after another, reading its file once, and keep no other run alive: after the
    whole experiment on one process, at most one of its runs is in memory. Before, every run was
    read once and kept for the process's life, whatever their number."""
    from rpdi.metrics.run_files import RunFile

    config, runs = three_runs
    _fresh_process()
    reads = []
    read = RunFile._read
    monkeypatch.setattr(RunFile, "_read", lambda self, *a, **k: reads.append(self.path) or read(self, *a, **k))
    executor.plan(load_config(str(config))[0])
    assert sorted(reads) == sorted(map(str, runs)) and _runs_alive(runs) == []
    reads.clear()
    run_experiment(str(config), out=str(config.parent / "out"))
    assert reads == list(map(str, runs)) * 2, reads  # checked by its plan, then once for all its tasks
    assert len(_runs_alive(runs)) <= 1



def test_a_config_run_file_holding_several_runs_is_one_line(three_runs, run_cli):
    """A config names its runs by their files: a table file with a ``run`` column of two runs is
    exit status 2 and one line naming the file, before anything is written (it was an internal
    error, StopIteration, once the tasks looked for a run of the file's name)."""
    config, runs = three_runs
    runs[0].with_suffix(".tsv").write_text("query_id\tdoc_id\tscore\trun\n1\ta\t2.0\tx\n1\tb\t1.0\ty\n")
    config.write_text(config.read_text().replace('"r1.txt"', '"r1.tsv"'))
    status, out, err = run_cli(["run", config, "--out", config.parent / "out"])
    assert (status, out) == (2, "") and err == f"rpdi run: {runs[0].with_suffix('.tsv')}: holds 2 runs (a run column); give one run a file\n"
    assert not (config.parent / "out").exists()

# ------------------------------------------------------------------ a real Dask cluster

SLOW = """
import os
import time

from rpdi.usermodels.base import BrowsingModel, geometric


class Slow(BrowsingModel):
    \"\"\"Half the users go on at each rank; made, it waits SLOW_TASK seconds (set in the
    cluster's workers only: it is made once a task).\"\"\"
    aggregation = "total"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        time.sleep(float(os.environ.get("SLOW_TASK", "0")))

    def step(self, state, at):
        return geometric(0.5, at.gain)
"""
RUNS = 6  # tasks: one per run


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A config of RUNS tasks (the slow model on RUNS different runs), and the results.csv of a
    plain run in one process."""
    base = tmp_path_factory.mktemp("sweep")
    (base / "q.txt").write_text("".join(f"1 0 d{i} {i % 3}\n2 0 d{i} {(i + 1) % 3}\n" for i in range(8)))
    for r in range(RUNS):  # each run ranks the eight documents in its own order
        order = [(i * (2 * r + 1) + r) % 8 for i in range(8)]
        (base / f"r{r}.txt").write_text("".join(f"{t} Q0 d{d} {k + 1} {8 - k} r{r}\n"
                                                 for t in (1, 2) for k, d in enumerate(order)))
    (base / "slow.py").write_text(SLOW)
    runs = ", ".join(f'"r{r}.txt"' for r in range(RUNS))
    (base / "c.toml").write_text(f'[experiment]\nname = "sweep"\nusers = 300\n\n[data]\nqrels = "q.txt"\n'
                                 f'runs = [{runs}]\n\n[[measures]]\nname = "slow.py:Slow"\n\n'
                                 f'[output]\nplots = false\n')
    run_experiment(str(base / "c.toml"), out=str(base / "one"), workers=1)
    return base / "c.toml", (base / "one" / "results.csv").read_bytes()


class Cluster:
    """A Dask scheduler and workers, each a process of its own on 127.0.0.1; :meth:`close`
    kills them all."""

    def __init__(self, directory):
        self.directory = directory
        self.processes: dict[str, subprocess.Popen] = {}
        self.address = None
        self.schedulers = 0
        self._observer = None

    def _spawn(self, name: str, *args: str, env=None) -> None:
        log = open(self.directory / f"{name}.log", "w")
        self.processes[name] = subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=self.directory,
                                                stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()

    def start_scheduler(self) -> None:
        """A new scheduler, on a port the system picks (read from its scheduler file)."""
        self.schedulers += 1
        file = self.directory / f"scheduler-{self.schedulers}.json"

        def address():
            with contextlib.suppress(OSError, ValueError, KeyError):  # not yet, or half written
                self.address = json.loads(file.read_text())["address"]
            return self.address is not None

        self.address = None
        self._spawn("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(file))
        assert _wait(address, 60), "the scheduler did not start"

    def start_worker(self, name: str, task_seconds: float = 0.5) -> None:
        """A worker process (no nanny: killing it kills the worker), one thread, where each task
        lasts at least ``task_seconds``."""
        self._spawn(name, "worker", self.address, "--name", name, "--no-nanny", "--nthreads", "1",
                    "--host", "127.0.0.1", "--no-dashboard", "--local-directory", str(self.directory / name),
                    env=os.environ | {"SLOW_TASK": str(task_seconds)})

    def observer(self):
        """A client of the scheduler, for looking (not for running anything)."""
        from dask.distributed import Client

        if self._observer is None:
            self._observer = Client(self.address, timeout="30s", set_as_default=False)
        return self._observer

    def wait_for_workers(self, n: int) -> None:
        self.observer().wait_for_workers(n, timeout=60)

    def holds(self, name: str) -> bool:
        """Whether the worker ``name`` is computing or holds a task."""
        observer = self.observer()
        names = {address: w["name"] for address, w in observer.scheduler_info()["workers"].items()}
        return any(names.get(address) == name and keys for address, keys in observer.processing().items())

    def kill(self, name: str) -> None:
        if name == "scheduler" and self._observer is not None:
            self._observer.close()
            self._observer = None
        process = self.processes.pop(name)
        process.kill()
        process.wait(10)

    def close(self) -> None:
        if self._observer is not None:
            self._observer.close(timeout=5)
        for name in list(self.processes):
            self.kill(name)


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.close()


def _start_run(config, out, address) -> subprocess.Popen:
    """``rpdi run CONFIG --scheduler ADDRESS`` as a command of its own."""
    argv = ["run", str(config), "--out", str(out), "--scheduler", address]
    return subprocess.Popen([sys.executable, "-m", "rpdi.experiments.cli", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(run: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = run.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        run.kill()
        out, err = run.communicate()
        pytest.fail(f"rpdi run did not end: {err}")
    return run.returncode, out, err


def test_a_worker_killed_while_holding_a_task_changes_nothing(sweep, cluster, tmp_path):
    config, expected = sweep
    cluster.start_scheduler()
    cluster.start_worker("a")
    cluster.start_worker("b")
    cluster.wait_for_workers(2)
    run = _start_run(config, tmp_path / "out", cluster.address)
    assert _wait(lambda: cluster.holds("a"), 60), "worker a got no task"
    cluster.kill("a")  # as the OOM killer would
    status, out, err = _finish(run)
    assert status == 0 and "Traceback" not in err, err
    assert out.startswith(f"0 of {RUNS} tasks reused")
    assert (tmp_path / "out" / "results.csv").read_bytes() == expected


def test_a_worker_joining_late_gets_work(sweep, cluster, tmp_path):
    config, expected = sweep
    cluster.start_scheduler()
    cluster.start_worker("a", task_seconds=1)  # alone, a would take six seconds or more
    cluster.wait_for_workers(1)
    run = _start_run(config, tmp_path / "out", cluster.address)
    assert _wait(lambda: cluster.holds("a"), 60)
    cluster.start_worker("late")
    assert _wait(lambda: cluster.holds("late"), 60), "the late worker got no task"
    status, out, err = _finish(run)
    assert status == 0 and "Traceback" not in err, err
    assert (tmp_path / "out" / "results.csv").read_bytes() == expected


def test_a_lost_scheduler_is_one_line_and_a_rerun_resumes(sweep, cluster, tmp_path):
    config, expected = sweep
    out_dir = tmp_path / "out"
    cluster.start_scheduler()
    cluster.start_worker("a")
    cluster.wait_for_workers(1)
    lost = cluster.address
    run = _start_run(config, out_dir, lost)
    assert _wait(lambda: len(_stored(out_dir)) >= 1, 60)
    cluster.kill("scheduler")
    status, out, err = _finish(run)
    lines = [line for line in err.splitlines() if line.startswith("rpdi run:")]
    assert status == 1 and out == "" and "Traceback" not in err, err
    assert lines == [f"rpdi run: --scheduler {lost}: the connection to the scheduler was lost; "
                     "finished tasks are kept, rerun to resume"], err
    assert not (out_dir / "results.csv").exists() and not glob.glob(str(out_dir / "tasks" / ".tmp-*"))
    kept = {path: os.stat(path) for path in _stored(out_dir)}
    assert 1 <= len(kept) < RUNS

    cluster.kill("a")
    cluster.start_scheduler()  # a new scheduler, elsewhere
    cluster.start_worker("b")
    cluster.wait_for_workers(1)
    status, out, err = _finish(_start_run(config, out_dir, cluster.address))
    assert status == 0, err
    assert out.startswith(f"{len(kept)} of {RUNS} tasks reused")
    for path, stat in kept.items():  # the finished tasks were not computed (nor written) again
        assert (os.stat(path).st_ino, os.stat(path).st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert (out_dir / "results.csv").read_bytes() == expected


def test_each_test_the_docs_name_exists():
    """The documentation (docs/configs.md) backs each promise of `rpdi run` with a test named
    ``file.py::test_name`` (in tests/experiments/): each must exist, or the promise is backed by
    nothing."""
    import re
    from pathlib import Path

    here = Path(__file__).parent
    named = re.findall(r"`(test_\w+\.py)::(test_\w+)`", (here.parents[1] / "docs" / "configs.md").read_text())
    assert len(named) >= 10
    for module, test in named:
        assert f"\ndef {test}(" in (here / module).read_text(), f"{module}::{test} (docs/configs.md) does not exist"
