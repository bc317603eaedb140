"""rpdi: effectiveness metrics as explicit stochastic users.

The short API; each name is a documented function of the package it lives in:

- :func:`evaluate` (``rpdi.metrics``): closed-form measures on TREC qrels and runs.
- :func:`score` (``rpdi.metrics``): one measure on one grade vector.
- :func:`simulate` (``rpdi.simulate``): closed form, exact expectation and simulated users.
- :func:`exact` and :func:`model_for` (``rpdi.usermodels``): a measure's browsing model and its
  exact expectations.
- :func:`run_experiment` (``rpdi.experiments``): an experiment from a TOML config.
- :func:`compare` (``rpdi.experiments.compare``): paired significance tests between runs, with
  intervals, corrections, effect sizes and what the measures' users experience.

>>> import rpdi
>>> round(rpdi.score("RBP(p=0.8)", [1, 1, 0, 0, 0, 1]), 4)
0.4255
"""

from importlib.metadata import PackageNotFoundError, version

from rpdi.experiments.compare import compare
from rpdi.experiments.run import run_experiment
from rpdi.metrics import evaluate, load_qrels, load_runs, parse_measure, score
from rpdi import simulate  # the package, callable as rpdi.simulate(...)
from rpdi.usermodels import exact, model_for

try:
    __version__ = version("rpdi")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"

__all__ = ["evaluate", "score", "simulate", "exact", "model_for", "run_experiment", "compare",
           "load_qrels", "load_runs", "parse_measure", "__version__"]
