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

from importlib import import_module

# where each short-API name lives; imported on first use, so that ``import rpdi.metrics`` (and
# the ``rpdi`` command's start-up) does not import the simulator and experiment runner (scipy)
_HOMES = {"evaluate": "rpdi.usermodels", "score": "rpdi.usermodels", "load_qrels": "rpdi.metrics",
          "load_runs": "rpdi.metrics", "parse_measure": "rpdi.metrics", "exact": "rpdi.usermodels",
          "model_for": "rpdi.usermodels", "run_experiment": "rpdi.experiments.experiment",
          "compare": "rpdi.experiments.compare"}

__all__ = ["evaluate", "score", "simulate", "exact", "model_for", "run_experiment", "compare",
           "load_qrels", "load_runs", "parse_measure", "__version__"]


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
    if name not in _HOMES:
        raise AttributeError(f"module 'rpdi' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value
