"""Planner and executor: a config becomes (measure, run) tasks, run locally or on Dask.

Every task carries everything it needs (data source, experiment settings, measure, run) and
computes, for each topic, the closed form, the exact expectation and the simulation; it reads
the qrels (once a process) and its own run file, so that a process holds one run at a time, not
every run (a session source's tasks, and ``[compare]`` with users or tie orders, read all). Its random
streams are keyed by (seed, run, topic, measure), so results are the same whichever process or
machine runs it, in whatever order. Each finished task is written to ``OUT/tasks/<id>.json``
atomically as it completes; a rerun skips the tasks already there (``fresh`` starts over), and
once every task is done the stored results of other ids (earlier settings or inputs) go. The
id hashes everything the result depends on, file contents included (:func:`fingerprint`), so
an edited qrels, run or model file is computed anew. Local workers ignore Ctrl-C (the parent
stops them at once, keeping what finished), never write to the parent's stdout and die with the
parent, however it dies. On Dask, a dead worker's tasks are computed elsewhere and a lost
scheduler is one line (:func:`_on_dask`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import shutil
import signal
import sys
import time
import warnings
from functools import lru_cache

import numpy as np

from rpdi.experiments.config import Config, expand_measures
from rpdi.experiments.overlap import check_overlap
from rpdi.experiments.session_data import check_sessions, measure_rankings, source_sessions
from rpdi.experiments.store import write_atomic
from rpdi.metrics.errors import InputError
from rpdi.metrics.trec import run_name
from rpdi.simulate.progress import progress_bar


def data_source(config: Config) -> dict:
    """A JSON-able description of the data that any worker can load: with a diversity or
    intent-aware measure (alpha-nDCG, X-IA), the qrels are diversity qrels (``diversity``) and
    ``intents`` the file of P(i|q), if given; with the session measures ``sessions``,
    a session file or ``"cast"`` (:func:`experiments.session_data.check_sessions`)."""
    from rpdi.usermodels import model_for

    models = [model_for(m) for m in expand_measures(config)]
    diversity = any(m.measure.spec.intents for m in models)
    if config.data.synthetic is not None:
        if diversity:
            raise InputError("measures: the diversity and intent-aware measures read diversity qrels "
                             "(data.qrels), not [data.synthetic]")
        if any(m.measure.spec.session for m in models):
            raise InputError("measures: the session measures read the sessions of qrels and runs (data.qrels, "
                             "data.runs, data.sessions), not [data.synthetic]")
        return {"synthetic": config.data.synthetic.model_dump()}
    if config.data.intents is not None and not diversity:
        raise InputError("data.intents: given, but no diversity or intent-aware measure (X-IA) reads them")
    extra = {"diversity": True, "intents": config.data.intents} if diversity else {}
    if check_sessions(config, models):
        extra = {"sessions": config.data.sessions}
    return {"qrels": config.data.qrels, "runs": list(config.data.runs), **extra}


@lru_cache(maxsize=4)
def _load(source_json: str):
    from rpdi.metrics.evaluate import load_diversity_qrels, load_qrels
    from rpdi.metrics.run_files import RunFile

    source = json.loads(source_json)
    if "synthetic" in source:
        from rpdi.experiments.synthetic import synthetic_collection

        return synthetic_collection(**source["synthetic"])
    qrels = (load_diversity_qrels if source.get("diversity") else load_qrels)(source["qrels"])
    return qrels, [RunFile(path) for path in source["runs"]]


def load_data(source: dict):
    """(Qrels, runs) of a data source (DiversityQrels for a diversity source), cached per
    process: the synthetic collection's Runs, or a file source's runs as
    :class:`~metrics.run_files.RunFile` objects, not read, so that the process holds the qrels
    and the run of the task at hand (:func:`source_run`), not every run."""
    return _load(json.dumps(source, sort_keys=True))


def source_run(source: dict, name: str):
    """The run ``name`` of a data source, read: a run file alone, kept until another run is asked
    for (a worker's tasks of one run follow one another, :func:`execute`)."""
    return _run(json.dumps(source, sort_keys=True), name)


@lru_cache(maxsize=1)
def _run(source_json: str, name: str):
    from rpdi.metrics.run_files import item_name, load_runs

    return load_runs([next(r for r in _load(source_json)[1] if item_name(r) == name)])[0]


def source_rankings(source: dict, runs, topics: str):
    """The rankings of ``runs`` on the source's qrels: with their subtopics and P(i|q) for a
    diversity source (:func:`simulate.api.collection_rankings`)."""
    from rpdi.simulate.api import collection_rankings

    return collection_rankings(load_data(source)[0], runs, topics, bool(source.get("diversity")),
                               source.get("intents"))[2]


def _digest(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read: {exc.strerror}") from None


def fingerprint(source: dict, measures: list[str]) -> dict[str, dict]:
    """Per measure, what a task's result depends on beyond its settings: the contents of the
    qrels and run files, the source of a model of one's own, and rpdi's version (not paths)."""
    from importlib.metadata import version

    from rpdi.usermodels.plugin import plugin_path

    from rpdi.experiments.config import CAST_SESSIONS

    extra = [source.get("intents"), source.get("sessions") if source.get("sessions") != CAST_SESSIONS else None]
    paths = [source["qrels"], *source["runs"], *filter(None, extra)] if "qrels" in source else []
    files = [_digest(f) for f in paths]
    models = {m: plugin_path(m) for m in measures}
    return {m: {"files": files, "model": _digest(path) if path else None, "rpdi": version("rpdi")}
            for m, path in models.items()}


def plan(config: Config) -> list[dict]:
    """The tasks of a config, one per (measure, run), in a fixed order; then, with
    ``agent_check``, one per (measure, run) of its subset on the agent engine. A task's id hashes
    all its result depends on (:func:`fingerprint`), so a changed input is computed anew. The
    task of each run's first measure also checks that run's reading (``simulate.exact_checks.reading_cells``)."""
    source = data_source(config)
    if "synthetic" in source:
        runs = [r.name for r in load_data(source)[1]]
    else:
        runs = [run_name(p) for p in source["runs"]]
        if len(set(runs)) != len(runs):
            dup = next(r for r in runs if runs.count(r) > 1)
            raise InputError(f"data.runs: two run files are named {dup!r}")
        qrels, files = load_data(source)
        for file in files:  # read one at a time and let go of: a malformed file is reported before anything
            # is written, a run sharing no topic with the qrels (a config averages over theirs) named
            check_overlap(qrels, [file.read()], "qrels", source["qrels"], "rpdi run")
        if "sessions" in source:  # so is a bad session file, or topics that are not CAsT's
            try:
                source_sessions(json.dumps(source, sort_keys=True), config.experiment.topics)
            except InputError as exc:
                raise InputError(f"data.sessions: {exc}") from None
    settings = config.experiment.model_dump(exclude={"name", "force"})
    measures = expand_measures(config)
    inputs = fingerprint(source, measures)
    pairs = [("main", measure, run, settings) for measure in measures for run in runs]
    agent = config.agent_check
    if agent is not None:  # the agent engine on a subset, for the verdict
        on_agents = settings | {"engine": "agent", "users": agent.users, "target_stderr": None}
        pairs += [("agent_check", measure, run, on_agents) for measure in agent.measures for run in runs[:agent.runs]]
    tasks = []
    for role, measure, run, task_settings in pairs:
        spec = {"data": source, "settings": task_settings, "measure": measure, "run": run}
        if role != "main":
            spec["role"] = role
        elif measure == measures[0]:  # a run's reading is checked once, with its first measure
            spec["reading"] = True
        key = json.dumps({**spec, "inputs": inputs[measure]}, sort_keys=True).encode()
        spec["id"] = hashlib.sha256(key).hexdigest()[:20]
        spec["force"] = config.experiment.force
        tasks.append(spec)
    return tasks


def run_task(spec: dict) -> dict:
    """Compute one task: per-topic records, the mean stopping distribution and the residuals. A
    numeric warning (overflow, NaN) is an ArithmeticError naming the task: its result may be wrong."""
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:  # also in a worker process, where the
        warnings.simplefilter("always", RuntimeWarning)  # command line's own check cannot see them
        result = _compute(spec)
    numeric = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    if numeric:
        raise ArithmeticError(f"{spec['measure']} on run {spec['run']}: {numeric[0].message} "
                              f"({os.path.basename(numeric[0].filename)}:{numeric[0].lineno})")
    return {**result, "seconds": time.perf_counter() - started}


def _compute(spec: dict) -> dict:
    from rpdi.simulate.exact_checks import reading_cells
    from rpdi.simulate.three_way import three_way
    from rpdi.usermodels import model_for

    qrels, run = load_data(spec["data"])[0], source_run(spec["data"], spec["run"])
    s = spec["settings"]
    model = model_for(spec["measure"])
    rankings = measure_rankings(spec["data"], [run], s["topics"], model.measure)
    records, (ex,), cells = three_way(
        rankings, [model], users=s["users"], seed=s["seed"], engine=s["engine"],
        per_topic=True, convention=s["convention"], target_stderr=s["target_stderr"], max_users=s["max_users"],
        force=spec["force"])
    for r in records:
        r["engine"] = s["engine"]
    if spec.get("reading"):  # of the run's rankings of the topics (a session's turns are laid out of them)
        cells += reading_cells(qrels, [run], source_rankings(spec["data"], [run], s["topics"]))
    present = rankings.present[0]
    stop = ex.stop[0][present].mean(axis=0)[:100] if present.any() else np.zeros(0)
    residual = {str(t): (None if not np.isfinite(r) else float(r))
                for t, r in zip(rankings.topics[present], ex.residual[0][present])}
    return {"id": spec["id"], "measure": spec["measure"], "run": spec["run"], "engine": s["engine"],
            "role": spec.get("role", "main"), "records": records, "cells": [c.as_dict() for c in cells],
            "stop": stop.tolist(), "residual": residual}


def execute(tasks: list[dict], out_dir: str, workers: int = 1, scheduler: str | None = None,
            fresh: bool = False, progress: bool = False) -> tuple[list[dict], int]:
    """Run the tasks not yet stored under ``out_dir/tasks``; return all results in plan order and
    how many were reused from the store. On an interrupt every finished task stays stored."""
    store = os.path.join(out_dir, "tasks")
    if fresh and os.path.isdir(store):
        shutil.rmtree(store)
    os.makedirs(store, exist_ok=True)
    path = lambda task_id: os.path.join(store, f"{task_id}.json")  # noqa: E731
    pending = [t for t in tasks if not os.path.exists(path(t["id"]))]
    pending.sort(key=lambda t: t["run"])  # a run's tasks one after another: each worker reads it once
    bar = progress_bar(len(tasks), progress, "task", initial=len(tasks) - len(pending))

    def keep(result: dict) -> None:
        write_atomic(path(result["id"]), json.dumps(result))
        bar.update(1)

    try:
        if pending and scheduler is not None:
            _on_dask(pending, scheduler, keep)
        elif pending and workers > 1:
            _on_processes(pending, workers, keep)
        else:
            for t in pending:
                keep(run_task(t))
    finally:
        bar.close()
    results = []
    for t in tasks:
        with open(path(t["id"])) as fh:
            results.append(json.load(fh))
    # every task is done: results of earlier settings or inputs (other ids) can never be reused
    current = {os.path.basename(path(t["id"])) for t in tasks}
    for name in os.listdir(store):
        if name not in current and os.path.isfile(os.path.join(store, name)):
            os.remove(os.path.join(store, name))
    return results, len(tasks) - len(pending)


_STOPS = {signal.SIGINT, signal.SIGTERM}


def _worker_start(parent: int) -> None:
    """In each worker: leave Ctrl-C to the parent; end at once on SIGTERM (the parent's
    ``terminate``), whatever handler or mask the parent had when it forked; write nothing to the
    parent's standard output (a pipeline reading rpdi's output sees its end when rpdi ends); and
    die with the parent, however it dies: on Linux the kernel sends SIGKILL (which nothing can
    block or ignore) when the parent dies, elsewhere a thread ends the worker within a second."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # held back by _on_processes while forking
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    with contextlib.suppress(OSError):  # (no stderr: rpdi run 2>&-)
        os.dup2(2, 1)  # file descriptors: sys.stdout may be a replacement without one
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    else:
        import threading

        threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _exit_with(parent: int) -> None:
    """End this process once ``parent`` is no longer its parent (it died: the process was
    adopted)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _on_processes(pending: list[dict], workers: int, keep) -> None:
    """Run tasks on local worker processes; an interrupt or error stops them at once. A worker
    that dies (the OOM killer, ``kill -9``) ends the run with one line naming ``--workers``, as
    an OSError (exit 1): its task would be lost, and the run would wait for it for ever."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool
    import multiprocessing

    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    # Ctrl-C and SIGTERM are held back while forking (the workers start as tasks are submitted),
    # until _worker_start has set them: one arriving in between would run the parent's handler
    # (a traceback) in the new worker
    masked = hasattr(signal, "pthread_sigmask")
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS) if masked else None
    try:
        pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_start,
                                   initargs=(os.getpid(),))
        futures = [pool.submit(run_task, t) for t in pending]
    finally:
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    try:
        for future in as_completed(futures):
            keep(future.result())
    except BrokenProcessPool:
        died = ("a worker process died (killed by the system: out of memory?); finished tasks are kept, "
                "rerun to resume")
        raise ChildProcessError(errno.ECHILD, died, f"--workers {workers}") from None
    except BaseException:
        for process in list(pool._processes.values()):  # Ctrl-C or a failed task: the other
            process.terminate()  # workers' work in progress is dropped (Python 3.14: terminate_workers)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def confirm_cell(spec: dict, cell):
    """The verdict's confirmation of a flagged cell of the task ``spec`` (see
    :func:`rpdi.simulate.confirm.confirmation`): its rankings simulated again on an independent
    stream; a p-value, or for a Dispersion cell its rankings' terms of the dispersion test."""
    from rpdi.simulate.confirm import confirmation
    from rpdi.usermodels import exact, model_for

    s = spec["settings"]
    model = model_for(spec["measure"])
    rankings = measure_rankings(spec["data"], [source_run(spec["data"], spec["run"])], s["topics"], model.measure)
    return confirmation(rankings, model, exact(model, rankings, s["convention"]), cell, seed=s["seed"],
                        convention=s["convention"])


def _on_dask(pending: list[dict], scheduler: str, keep) -> None:
    """Run tasks on a Dask cluster. Dask computes again elsewhere the tasks of a worker that
    dies, and gives tasks to workers that join late; a lost scheduler (its tasks are lost with
    it) is one line naming it, as an OSError (exit 1), and the finished tasks stay stored.
    Dask's own log of the lost connection (tracebacks on stderr) is silenced meanwhile."""
    try:
        from dask.distributed import Client, as_completed
        from distributed.client import FutureCancelledError
        from distributed.comm import CommClosedError
    except ImportError:
        raise InputError("--scheduler needs dask.distributed: pip install 'rpdi[distributed]'") from None
    logs = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)
            if name == "distributed" or name.startswith("distributed.")]
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.CRITICAL + 1)
    try:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise InputError(f"--scheduler {scheduler}: cannot connect: {exc}") from None
        try:
            for future in as_completed(client.map(run_task, pending, pure=False)):
                keep(future.result())
        except (FutureCancelledError, CommClosedError):  # the client cancels all when the scheduler goes
            lost = "the connection to the scheduler was lost; finished tasks are kept, rerun to resume"
            raise ConnectionResetError(errno.ECONNRESET, lost, f"--scheduler {scheduler}") from None
        finally:
            client.close()
    finally:
        for log, level in zip(logs, levels):
            log.setLevel(level)
