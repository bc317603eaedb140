"""``rpdi run``: validate a config, plan, execute (resumably), report."""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from importlib import resources

from rpdi.experiments.config import expand_measures, load_config
from rpdi.experiments.report import Summary, write_report
from rpdi.experiments.tasks import confirm_cell, data_source, execute, load_data, plan
from rpdi.metrics.errors import InputError
from rpdi.simulate.cells import cell_from_dict
from rpdi.simulate.verdict import verdict as decide

SHIPPED = ("validate_core", "rbp_paper", "metric_agreement", "template", "cast2021_sessions")


def config_path(name_or_path: str) -> str:
    """A config file's path: the argument itself, or a config shipped with rpdi by name."""
    if os.path.isfile(name_or_path) or name_or_path.endswith(".toml"):  # a directory is not a config
        return name_or_path
    if name_or_path in SHIPPED:
        return str(resources.files("rpdi.experiments") / "configs" / f"{name_or_path}.toml")
    raise InputError(f"{name_or_path}: no such config file, and not a shipped config ({', '.join(SHIPPED)})")


def _task_label(result: dict) -> str:
    label = f"{result['measure']} | {result['run']}"
    return label + " | agent check" if result.get("role") == "agent_check" else label


def run_experiment(config: str = "validate_core", out: str | None = None, workers: int = 1,
                   scheduler: str | None = None, fresh: bool = False, progress: bool = False,
                   force: bool = False) -> Summary:
    """Run an experiment config end to end; returns the terminal summary.

    Everything is validated (config, data, measures) before anything is written. The
    :class:`~rpdi.experiments.report.Summary` has the terminal text and the three-way verdict:
    ``.verdict`` and ``.status`` (0 agree, 1 an undeclared disagreement), see
    :func:`rpdi.simulate.verdict.verdict`.
    ``force`` (as the config's ``force``) simulates even beyond
    :data:`rpdi.simulate.work.TIME_LIMIT`.
    """
    if workers < 1:
        raise InputError(f"--workers: must be >= 1, not {workers}")
    path = config_path(config)
    cfg, base = load_config(path)
    measures = expand_measures(cfg, path)
    cfg.experiment.force = cfg.experiment.force or force
    tasks = plan(cfg)
    data = load_data(data_source(cfg))  # the qrels read by plan (load_data keeps them), the runs read by each analysis
    if out is None:
        out = os.path.join(base, cfg.output.dir) if cfg.output.dir else os.path.join("results", cfg.experiment.name)
    with output_lock(out), sigterm_as_interrupt():
        started = time.perf_counter()
        results, reused = execute(tasks, out, workers=workers, scheduler=scheduler, fresh=fresh,
                                  progress=progress)
        manifest = {"experiment": cfg.experiment.name, "seed": cfg.experiment.seed, "tasks": len(tasks),
                    "reused": reused, "workers": workers, "scheduler": scheduler,
                    "seconds": time.perf_counter() - started,
                    "task_seconds": {_task_label(r): r["seconds"] for r in results}}
        by_id = {t["id"]: t for t in tasks}
        cells = [cell_from_dict(c | {"task": res["id"]}) for res in results for c in res.get("cells", [])]
        verdict = decide(cells, cfg.experiment.alpha, lambda c: confirm_cell(by_id[c.task], c))
        report = write_report(out, cfg, path, measures, results, manifest, verdict, data)
    return Summary(f"{reused} of {len(tasks)} tasks reused from {os.path.join(out, 'tasks')}, "
                   f"{len(tasks) - reused} computed\n" + report.text, report.verdict)


class Terminated(KeyboardInterrupt):
    """SIGTERM during a run: it stops as on Ctrl-C (the finished tasks are kept), with the exit
    status of a process ended by SIGTERM."""

    status = 128 + signal.SIGTERM

    def __str__(self) -> str:
        return "terminated (SIGTERM)"


@contextmanager
def sigterm_as_interrupt():
    """SIGTERM raises :class:`Terminated` in the main thread while the block runs. The handler
    is set only where SIGTERM would end the process at once (its default); one that is ignored
    or handled by whoever embeds rpdi is left as it is."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return

    def terminate(signum, frame):
        raise Terminated

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def output_lock(out: str):
    """Create the output directory and hold a lock on it (fcntl.flock on the directory itself)
    while writing: a second run on the same directory is refused in one line. InputError naming
    the path when the directory cannot be made or opened."""
    try:
        os.makedirs(out, exist_ok=True)
        if not os.access(out, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
        fd = os.open(out, os.O_RDONLY)
    except OSError as exc:
        why = "is a file, not a directory" if os.path.isfile(out) else f"cannot be written ({exc.strerror})"
        raise InputError(f"output directory {out}: {why}") from None
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # no flock (Windows): no lock
            pass
        except OSError:
            raise InputError(f"output directory {out}: another rpdi run is writing there; wait for "
                             f"it or give another --out") from None
        yield
    finally:
        os.close(fd)
