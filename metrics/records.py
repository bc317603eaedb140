"""rpdi's records as a pandas DataFrame with typed columns, for notebooks and pipelines.

Every Python entry point returns flat records (dicts), one per (run, topic, measure) or per pair
of runs; :func:`records_frame` turns them into a DataFrame whose columns are typed by what they
hold: text (ids: ``run``, ``topic``, ``measure``, ``method``, ...) as ``category``; numbers as
``float64`` (None, an undefined value, as NaN; whole numbers with none missing, such as counts of
users or topics, as ``int64``); True/False as ``bool`` (``boolean`` where some are missing);
anything else (a dict of counterexamples) as ``object``. The columns are the records' keys, in
their order; each entry point documents its own:

- ``rpdi.evaluate``: run, topic, measure, value, residual, method (with ``ties``: ties, and low,
  high for a range);
- ``rpdi.simulate``: run, topic, measure, aggregation, closed_form, exact, estimate, stderr, z,
  users (and the settings' columns it adds);
- ``rpdi.compare``: :data:`experiments.compare.FIELDS` (and ``USER_FIELDS``, ``TIE_FIELDS``);
- the click models' ``fit_and_evaluate`` (:mod:`usermodels.clickeval`) and the properties'
  records (``Analysis.record``): their keys.

>>> frame = records_frame([{"run": "a", "topic": "1", "measure": "P@2", "value": 0.5, "residual": None},
...                        {"run": "a", "topic": "all", "measure": "P@2", "value": 0.5, "residual": None}])
>>> frame.dtypes.astype(str).tolist()
['category', 'category', 'category', 'float64', 'float64']
"""

from __future__ import annotations

from typing import Iterable

_NUMBERS = {"floating", "integer", "mixed-integer-float", "decimal", "empty"}


def records_frame(records: Iterable[dict]):
    """The records as a DataFrame with typed columns (see the module docstring)."""
    import pandas as pd

    frame = pd.DataFrame.from_records(list(records))
    for name in frame.columns:
        frame[name] = _typed(frame[name])
    return frame


def _typed(column):
    import pandas as pd

    kind = pd.api.types.infer_dtype(column, skipna=True)
    if kind == "string":
        return column.astype("category")
    if kind == "boolean":
        return column.astype("boolean" if column.isna().any() else bool)
    if kind in _NUMBERS:
        whole = kind == "integer" and not column.isna().any()
        return column.astype("int64" if whole else "float64")
    return column.astype(object)
