"""Qrels named ``irds:DATASET_ID``, read through ir_datasets (MacAvaney et al., SIGIR 2021), the
catalogue of IR test collections most researchers load theirs from: ``irds:msmarco-passage/dev/small``,
``irds:vaswani``. ir_datasets is an optional dependency (``pip install 'rpdi[irds]'``); a
dataset whose qrels are neither downloaded nor downloadable (offline) is an InputError, as is
a name ir_datasets does not know. A dataset of one's own registered with ir_datasets
(``ir_datasets.registry.register(name, ir_datasets.create_dataset(qrels_trec=path))``) is read
the same way.
"""

from __future__ import annotations

import contextlib
import logging

from rpdi.metrics.errors import InputError
from rpdi.metrics.trec import Qrels


def irds_qrels(dataset_id: str) -> Qrels:
    """The qrels of ir_datasets' dataset ``dataset_id`` (its ``query_id``, ``doc_id`` and
    ``relevance``; ``iteration`` ignored), named ``irds:DATASET_ID`` in messages."""
    source = f"irds:{dataset_id}"
    try:
        import ir_datasets
    except ImportError:
        raise InputError(f"{source}: ir_datasets is not installed (pip install 'rpdi[irds]')") from None
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"{source}: ir_datasets has no dataset {dataset_id!r}") from None
    if not dataset.has_qrels():
        raise InputError(f"{source}: the dataset has no qrels")
    import pandas as pd

    from rpdi.metrics.frames import qrels_from_table

    try:
        with _quiet("ir_datasets"):
            frame = pd.DataFrame(dataset.qrels_iter())
    except FileNotFoundError as exc:
        raise InputError(f"{source}: qrels file missing: {exc.filename or exc}") from None
    except Exception:  # ir_datasets' download errors have many types, each a long repr: one plain line
        raise InputError(f"{source}: qrels not available offline and the download failed") from None
    if frame.empty:
        raise InputError(f"{source}: empty qrels")
    return qrels_from_table(frame, source)


@contextlib.contextmanager
def _quiet(name: str):
    """Logger ``name`` and its children disabled (ir_datasets logs each download retry to stderr
    through its own handler, not propagating)."""
    loggers = [logging.getLogger(name)] + [logging.getLogger(n) for n in list(logging.root.manager.loggerDict)
                                           if n.startswith(name + ".")]
    before = [lg.disabled for lg in loggers]
    for lg in loggers:
        lg.disabled = True
    try:
        yield
    finally:
        for lg, disabled in zip(loggers, before):
            lg.disabled = disabled
