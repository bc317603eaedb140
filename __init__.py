"""rpdi: effectiveness metrics as explicit stochastic users.

The short API; each name is a documented function of the package it lives in:

- :func:`evaluate` (``rpdi.metrics``): closed-form measures on qrels and runs.
- :func:`score` (``rpdi.metrics``): one measure on one grade vector.
- :func:`simulate` (``rpdi.simulate``): closed form, exact expectation and simulated users.
- :func:`exact` and :func:`model_for` (``rpdi.usermodels``): a measure's browsing model and its
  exact expectations.
- :func:`run_experiment` (``rpdi.experiments``): an experiment from a TOML config.
- :func:`compare` (``rpdi.experiments.compare``): paired significance tests between runs, with
  intervals, corrections, effect sizes and what the measures' users experience.
- :func:`fit` (``rpdi.usermodels.clickfit``): a click model (a metric's user among them) fitted to
  a click log.
- :func:`properties` (``rpdi.usermodels.properties``): Moffat's seven properties of measures.
- ``ir_measures_provider`` (``rpdi.usermodels.ir_measures_provider``): rpdi as ir_measures'
  provider ``rpdi``, registered on first use, and already on ``import rpdi`` when ir_measures
  is imported before rpdi.

Qrels and runs are taken as files (TREC, TSV/CSV with a header row, parquet), ``irds:DATASET_ID``
qrels, pandas DataFrames or pyarrow Tables with ir_measures', ranx's or PyTerrier's column names
(:mod:`metrics.frames`), or dicts; ``as_frame=True`` returns a DataFrame with typed columns
instead of records (:mod:`metrics.records`).

>>> import rpdi
>>> round(rpdi.score("RBP(p=0.8)", [1, 1, 0, 0, 0, 1]), 4)
0.4255
>>> import pandas as pd
>>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
>>> run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
>>> rpdi.evaluate(qrels, run, ["RR", "P@1"], as_frame=True)[["measure", "value"]]
  measure  value
0      RR    0.5
1     P@1    0.0
"""

import sys
from importlib import import_module

# where each short-API name lives; imported on first use, so that ``import rpdi.metrics`` (and
# the ``rpdi`` command's start-up) does not import the simulator and experiment runner (scipy)
_HOMES = {"evaluate": "rpdi.usermodels", "score": "rpdi.usermodels", "load_qrels": "rpdi.metrics",
          "load_runs": "rpdi.metrics", "parse_measure": "rpdi.metrics", "exact": "rpdi.usermodels",
          "model_for": "rpdi.usermodels", "run_experiment": "rpdi.experiments.experiment",
          "compare": "rpdi.experiments.compare", "fit": "rpdi.usermodels.clickfit",
          "properties": "rpdi.usermodels.properties"}

__all__ = ["evaluate", "score", "simulate", "exact", "model_for", "run_experiment", "compare", "fit",
           "properties", "load_qrels", "load_runs", "parse_measure", "ir_measures_provider", "__version__"]


def __getattr__(name: str):
    if name == "__version__":  # looked up on first use: importlib.metadata costs every start-up 40 ms
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("rpdi")
        except PackageNotFoundError:  # imported from a source tree that was never installed
            value = "unknown"
        globals()[name] = value
        return value
    if name == "simulate":  # the package, callable as rpdi.simulate(...)
        return import_module("rpdi.simulate")
    if name == "ir_measures_provider":  # the module; importing it registers the provider
        value = import_module("rpdi.usermodels.ir_measures_provider")
        globals()[name] = value
        return value
    if name not in _HOMES:
        raise AttributeError(f"module 'rpdi' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


if "ir_measures" in sys.modules:  # an ir_measures user: rpdi answers as its provider "rpdi" at once
    import_module("rpdi.usermodels.ir_measures_provider")
