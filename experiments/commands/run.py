"""``rpdi run``: an experiment config, end to end."""

from __future__ import annotations

from rpdi.experiments.commands.outputs import check_writable
from rpdi.experiments.report import Summary
from rpdi.experiments.experiment import run_experiment


def run(args) -> Summary:
    check_writable(args.out, "--out", directory=True)  # (a config's own output.dir: when it is read)
    return run_experiment(args.config, out=args.out, workers=args.workers, scheduler=args.scheduler,
                          fresh=args.fresh, progress=True, force=args.force)
