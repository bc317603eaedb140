"""What the commands on qrels and runs share: reading the files named on the command line."""

from __future__ import annotations

import os

from rpdi.experiments.overlap import check_overlap
from rpdi.metrics.errors import InputError


def collection(args, topics: str, diversity: bool = False, qrels=None, lazy: bool = False):
    """The qrels and runs named on the command line, read once (with lengths if given); a run
    that shares no topic with the qrels is named (:func:`check_overlap`; ``topics``: the
    topics the command averages over). With ``diversity`` the qrels are read as diversity qrels
    (``topic subtopic docno judgment``, :mod:`metrics.diversity`). Qrels and runs may be TSV/CSV
    files with a header row or parquet files (:mod:`metrics.frames`), qrels ``irds:DATASET_ID``;
    ``qrels`` given: those, already
    read (uncertain grades, :mod:`experiments.commands.worlds`). With ``lazy`` the runs are
    :class:`~metrics.run_files.RunFile` objects, each read (and checked) only when its batch is
    evaluated (:func:`~metrics.run_files.run_batches`)."""
    from rpdi.metrics.evaluate import load_diversity_qrels, load_qrels
    from rpdi.metrics.run_files import RunFile, file_bytes, load_runs
    from rpdi.metrics.trec import read_lengths, with_lengths

    checked = set()  # a run read twice (rpdi compare, to rank it deeper) is checked once

    def then(run):
        if (run.name, run.source) not in checked:
            checked.add((run.name, run.source))
            check_overlap(qrels, [run], topics, args.qrels, f"rpdi {args.command}")
        return run if lengths is None else with_lengths(run, lengths)

    runs = [RunFile(path, name, then) for name, path in named_runs(args.runs)]
    if lazy and runs:  # the first run, if larger than the qrels file, read while they are
        runs[0] = runs[0].read_ahead(file_bytes(args.qrels))
    if qrels is None:
        qrels = load_diversity_qrels(args.qrels) if diversity else load_qrels(args.qrels)
    lengths = read_lengths(args.doc_lengths) if args.doc_lengths else None
    return qrels, runs if lazy else load_runs(runs)


def measure_names(args) -> list[str]:
    """The measures of ``-m`` and, after them, of every ``--measures-from FILE``: the ``fitted``
    measures of an ``rpdi fit --format json`` output (the fitted users of the metrics, best
    held-out perplexity first; click models that are no metric's user, like PBM, have none)."""
    names = list(args.measures or [])
    for path in args.measures_from or []:
        names += fitted_measures(path)
    if not names:
        raise InputError("no measure: give -m MEASURE or --measures-from FIT.json")
    return names


def fitted_measures(path: str) -> list[str]:
    """The ``fitted`` measures in the ``rpdi fit --format json`` output at ``path``."""
    import json

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise InputError(f"--measures-from {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"--measures-from {path}: not JSON ({exc})") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list) or not all(isinstance(m, dict) and "fitted" in m for m in models):
        raise InputError(f"--measures-from {path}: not the output of rpdi fit --format json "
                         f"(no \"models\" list with \"fitted\" measures)")
    names = [m["fitted"] for m in models if m["fitted"] is not None]
    if not names or not all(isinstance(n, str) for n in names):
        raise InputError(f"--measures-from {path}: none of its models is a metric's user (no fitted measure); "
                         f"fit one, e.g. rpdi fit LOGS -m RBP")
    return names


def resolved_measures(texts: list[str]) -> list:
    """The -m arguments, a model of one's own loaded (once) as its measure, valued by its exact
    expectation; other names as given. The browsing models are imported only when a name is of
    one's own (``file.py:Class``, ``module:Class``): a plain ``rpdi eval`` starts without them."""
    if not any(":" in m for m in texts):
        return list(texts)
    from rpdi.usermodels import resolve

    return [resolve(m) for m in texts]


def named_runs(items: list[str]) -> list[tuple[str | None, str]]:
    """Run arguments as (name, path): the name None for a path, given for NAME=PATH (a file
    whose own name contains '=' is taken as a path)."""
    out = []
    for item in items:
        name, sep, path = item.partition("=")
        out.append((name, path) if sep and name and not os.path.exists(item) else (None, item))
    return out
