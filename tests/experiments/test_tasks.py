"""The task executor under faults (issues 10 and 24): local worker processes never outlive the
run that started them, and SIGTERM stops a run as Ctrl-C does.

The runs are started forked (as a shell job: the leader of its own process group), so that
nothing is imported again; every wait is bounded. Each test here failed on the code before its
fix: workers that inherited a blocked or ignored SIGTERM from their parent survived its death
(they were armed with SIGTERM as their parent-death signal) and kept its standard output open,
and SIGTERM ended a run with no word. The tests against a real Dask cluster are in
test_cluster.py.
"""

from __future__ import annotations

import contextlib
import glob
import os
import select
import signal
import sys
import time

import pytest

from rpdi.experiments.cli import main
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


def _in_group(pgid: int) -> int:
    """Live (not zombie) processes of a process group."""
    count = 0
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            text = open(stat).read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        count += int(fields[2]) == pgid and fields[0] != "Z"
    return count


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
