"""Simulated users: the vectorised lockstep and simpy agent engines, estimators with standard
errors, and the three-way agreement check (closed form, exact, simulation).

The package is itself callable: ``rpdi.simulate(qrels, runs, measures, ...)`` is
:func:`rpdi.simulate.api.simulate`, while ``rpdi.simulate.vector`` and the other modules stay
reachable as usual.
"""

import inspect
import sys
import types

from rpdi.simulate.api import simulate
from rpdi.simulate.batch import simulate_ranking
from rpdi.simulate.estimators import Moments


class _CallablePackage(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return simulate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
__signature__ = inspect.signature(simulate)  # what inspect and help() show for rpdi.simulate(...)

__all__ = ["simulate", "simulate_ranking", "Moments"]
