"""``rpdi run``: validate a config, plan, execute (resumably), report."""

from __future__ import annotations

import os
import time
from importlib import resources

from rpdi.experiments.config import expand_measures, load_config
from rpdi.experiments.report import write_report
from rpdi.experiments.runner import confirm_cell, execute, plan
from rpdi.metrics.trec import InputError
from rpdi.simulate import check

SHIPPED = ("validate_core", "rbp_paper", "metric_agreement", "template")


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
                   scheduler: str | None = None, fresh: bool = False, progress: bool = False) -> str:
    """Run an experiment config end to end; returns the terminal summary.

    Everything is validated (config, data, measures) before anything is written. The summary
    (a str) carries the three-way verdict: ``.verdict`` and ``.status`` (0 agree, 1 an
    undeclared disagreement), see :func:`rpdi.simulate.check.verdict`.
    """
    if workers < 1:
        raise InputError(f"--workers: must be >= 1, not {workers}")
    path = config_path(config)
    cfg, base = load_config(path)
    measures = expand_measures(cfg, path)
    tasks = plan(cfg)
    if out is None:
        out = os.path.join(base, cfg.output.dir) if cfg.output.dir else os.path.join("results", cfg.experiment.name)
    started = time.perf_counter()
    results = execute(tasks, out, workers=workers, scheduler=scheduler, fresh=fresh, progress=progress)
    manifest = {"experiment": cfg.experiment.name, "seed": cfg.experiment.seed, "tasks": len(tasks),
                "workers": workers, "scheduler": scheduler, "seconds": time.perf_counter() - started,
                "task_seconds": {_task_label(r): r["seconds"] for r in results}}
    by_id = {t["id"]: t for t in tasks}
    cells = [c | {"task": res["id"]} for res in results for c in res.get("cells", [])]
    readings = {c["run"]: c for c in cells if c["kind"] == "reading"}  # every task of a run reads it
    cells = [c for c in cells if c["kind"] != "reading"] + list(readings.values())
    verdict = check.verdict(cells, cfg.experiment.alpha, lambda c: confirm_cell(by_id[c["task"]], c))
    return write_report(out, cfg, path, measures, results, manifest, verdict)
