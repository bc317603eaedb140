"""What the commands on qrels and runs share: reading the files named on the command line."""

from __future__ import annotations

import os



def collection(args):
    """The qrels and runs named on the command line, read once (with lengths if given)."""
    from rpdi.metrics import load_runs
    from rpdi.metrics.trec import read_lengths, read_qrels, with_lengths

    qrels = read_qrels(args.qrels)
    runs = load_runs(named_runs(args.runs))
    if args.doc_lengths:
        lengths = read_lengths(args.doc_lengths)
        runs = [with_lengths(run, lengths) for run in runs]
    return qrels, runs


def resolved_measures(texts: list[str]) -> list:
    """The -m arguments, a model of one's own loaded (once) as its measure, valued by its exact
    expectation; other names as given. The browsing models are imported only when a name is of
    one's own (``file.py:Class``, ``module:Class``): a plain ``rpdi eval`` starts without them."""
    if not any(":" in m for m in texts):
        return list(texts)
    from rpdi.usermodels import resolve

    return [resolve(m) for m in texts]


def named_runs(items: list[str]) -> list:
    """Run arguments as paths, or as runs read under their given name for NAME=PATH (a file
    whose own name contains '=' is taken as a path)."""
    from rpdi.metrics.trec import read_run

    out = []
    for item in items:
        name, sep, path = item.partition("=")
        out.append(read_run(path, name) if sep and name and not os.path.exists(item) else item)
    return out
