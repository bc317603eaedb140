"""A run that shares no topic with the qrels: evaluated, it would be a column of silent zeros."""

from __future__ import annotations

import sys

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.metrics.trec import to_numpy


def check_overlap(qrels, runs, topics: str, qrels_path: str, command: str) -> None:
    """A run none of whose topics is in the qrels would be silently valued as empty rankings (0
    for most measures): averaged over the qrels' topics that is a one-line warning on stderr
    naming the run and the qrels; with ``topics="intersection"`` (the topics a run retrieved
    for, and qrels has) there is nothing to average, an InputError (trec_eval too stops there:
    "No queries with both results and relevance info")."""
    judged = set(_topics(qrels))
    for run in runs:
        retrieved = _topics(run)
        if not retrieved or judged.intersection(retrieved):
            continue
        shown = ", ".join(sorted(retrieved)[:3]) + (", ..." if len(retrieved) > 3 else "")
        what = (f"run {run.name!r} ({run.source}) shares no topic with the qrels {qrels_path} (its "
                f"{len(retrieved)} topic{'s' * (len(retrieved) != 1)}: {shown})")
        if topics == "intersection":
            raise InputError(f"{what}: averaged over the topics a run shares with the qrels (--topics "
                             f"intersection) it has nothing to be evaluated on")
        print(f"{command}: warning: {what}: its values are those of empty rankings", file=sys.stderr)


def _topics(table) -> list[str]:
    """The distinct topic ids of a Qrels or Run (its dictionary's entries in use)."""
    names = table.topic.dictionary.to_pylist()  # np.asarray and take would import pandas
    used = np.bincount(to_numpy(table.topic.indices), minlength=len(names))  # (a sort of every line costs more)
    return [names[i] for i in np.flatnonzero(used).tolist()]
