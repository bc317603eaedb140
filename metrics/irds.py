"""Qrels named ``irds:DATASET_ID``, read through ir_datasets (MacAvaney et al., SIGIR 2021), the
catalogue of IR test collections most researchers load theirs from: ``irds:msmarco-passage/dev/small``,
``irds:vaswani``. ir_datasets is an optional dependency (``pip install 'rpdi[irds]'``); a
dataset whose qrels are neither downloaded nor downloadable (offline) is an InputError, as is
a name ir_datasets does not know. A dataset of one's own registered with ir_datasets
(``ir_datasets.registry.register(name, ir_datasets.create_dataset(qrels_trec=path))``) is read
the same way.
"""

from __future__ import annotations

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
        rows = list(dataset.qrels_iter())
    except Exception as exc:  # ir_datasets' download and file errors have many types: one line for each
        reason = (str(exc).splitlines() or [""])[0]
        reason = reason if len(reason) <= 160 else reason[:157] + "..."
        raise InputError(f"{source}: qrels not available (not downloaded, and not downloadable now: "
                         f"{type(exc).__name__}: {reason})") from None
    if not rows:
        raise InputError(f"{source}: empty qrels")
    return qrels_from_table(pd.DataFrame(rows), source)
