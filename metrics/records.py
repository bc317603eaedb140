"""rpdi's records as a pandas DataFrame with typed columns, for notebooks and pipelines.

Every Python entry point returns flat records (dicts), one per (run, topic, measure) or per pair
of runs; :func:`records_frame` turns them into a DataFrame whose columns are typed by their field,
whatever the values of one call (so that frames of two calls, one with missing values and one
without, have the same dtypes and concatenate keeping them):

- text (ids: ``run``, ``topic``, ``measure``; labels: ``method``, ``aggregation``, ...):
  ``string`` (pandas' nullable string dtype, missing as ``<NA>``). Not ``category``: the
  categories of two frames differ, and ``pd.concat`` would turn the column into ``object``;
- numbers (values, residuals, p-values, ...): ``float64``, an undefined value (None) as NaN;
- counts (``users``, ``topics``, ``iterations``, ...): ``Int64`` (nullable integers);
- flags (``significant``, the seven properties): ``boolean`` (nullable);
- anything else (a dict of counterexamples, click curves): ``object``.

:data:`FIELDS` gives each field of rpdi's records its type; a field not in it (a parameter's
column, ``perplexity_3``, a record of one's own) is typed by the kind of its values: all text,
all True/False, all whole numbers (Python ints), numbers, else object, missing values aside (a
column of None only: float64). The columns are the records' keys, in their order; each entry
point documents its own:

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
['string', 'string', 'string', 'float64', 'float64']
"""

from __future__ import annotations

from typing import Iterable

from rpdi.metrics.properties import PROPERTIES

TEXT, NUMBER, COUNT, FLAG, OBJECT = "string", "float64", "Int64", "boolean", "object"

FIELDS = {
    **dict.fromkeys(("run", "topic", "measure", "method", "ties", "path", "aggregation", "engine", "run_a",
                     "run_b", "user_outcome", "user_method", "grades", "worlds_path", "search", "model",
                     "fitted", "parameters"), TEXT),
    **dict.fromkeys(("value", "residual", "low", "high", "sd", "error", "closed_form", "exact", "estimate",
                     "stderr", "z", "population_rate", "mean_a", "mean_b", "diff", "ci_low", "ci_high",
                     "statistic", "p", "p_adjusted", "effect_size", "diff_low", "diff_high", "user_b_better",
                     "user_ci_low", "user_ci_high", "worlds_diff", "worlds_sd", "worlds_low", "worlds_high",
                     "p_b_beats", "p_tie", "p_error", "probability", "loglik", "perplexity", "train_loglik",
                     "seconds"), NUMBER),
    **dict.fromkeys(("users", "topics", "intent", "iterations", "sessions_train", "sessions_test"), COUNT),
    **dict.fromkeys(("significant", *PROPERTIES), FLAG),
    **dict.fromkeys(("counterexamples", "curves"), OBJECT),
}  # "sessions" is a count in compare's records of session measures, a dict in fit_and_evaluate's
_KINDS = {"string": TEXT, "boolean": FLAG, "integer": COUNT, "floating": NUMBER, "mixed-integer-float": NUMBER,
          "decimal": NUMBER, "empty": NUMBER}


def records_frame(records: Iterable[dict]):
    """The records as a DataFrame with typed columns (see the module docstring)."""
    import pandas as pd

    frame = pd.DataFrame(list(records), dtype=object)  # the values as given: 3 and None, not 3.0 and NaN
    for name in frame.columns:
        frame[name] = _typed(frame[name], FIELDS.get(name))
    return frame


def _typed(column, dtype: str | None):
    import pandas as pd

    if dtype is None:
        dtype = _KINDS.get(pd.api.types.infer_dtype(column, skipna=True), OBJECT)
    return column.astype(dtype)
