"""Browsing models of one's own, named on the command line or in a config as
``path/to/model.py:ClassName(param=value,...)@k``.

The class subclasses :class:`usermodels.base.BrowsingModel` and declares its parameters with
defaults in ``parameters`` (their types follow the defaults); see
``usermodels/examples/two_strikes.py``. It has no closed form: rpdi gives its exact values,
simulations and properties with no change to rpdi itself.

Loading a model of one's own imports its file: it EXECUTES PYTHON CODE, also when a config file
someone sent you names it; name only files you trust. An exception raised in the model's code
(``__init__``, ``step``, ``gains``, ...) becomes an InputError naming the measure, the file, the
class and the method.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re

from rpdi.metrics.measures.registry import MeasureSpec, Param, parse_declared
from rpdi.metrics.errors import InputError
from rpdi.usermodels.base import BrowsingModel

_PLUGIN = re.compile(r"^(?P<path>.+?\.py):(?P<name>[A-Za-z_]\w*)(?P<rest>.*)$")


def is_plugin(text: str) -> bool:
    return bool(_PLUGIN.match(text.strip()))


def plugin_path(text: str) -> str | None:
    """The file of a model of one's own named by ``text`` (None for a measure of rpdi's)."""
    match = _PLUGIN.match(text.strip())
    return match.group("path") if match else None


def load_plugin(text: str) -> BrowsingModel:
    match = _PLUGIN.match(text.strip())
    if match is None:
        raise InputError(f"measure {text!r}: expected path/to/model.py:ClassName(param=value,...)@k")
    path, name, rest = match.group("path", "name", "rest")
    if not os.path.isfile(path):
        raise InputError(f"measure {text!r}: {path}: no such file")
    module_spec = importlib.util.spec_from_file_location(f"rpdi_plugin_{abs(hash(os.path.abspath(path)))}", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: report its error in one line
        raise InputError(f"measure {text!r}: {path}: cannot be loaded: {type(exc).__name__}: {exc}") from None
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BrowsingModel)):
        raise InputError(f"measure {text!r}: {path} defines no BrowsingModel subclass {name!r}")
    params = tuple(Param(key, type(default), default, f"{name} parameter")
                   for key, default in getattr(cls, "parameters", {}).items())
    spec = MeasureSpec(name, None, params, "optional", getattr(cls, "rule", name),
                       getattr(cls, "citation", path))
    measure = parse_declared(name + rest, {name: spec})
    guarded = _guarded(cls, text.strip(), path)
    return guarded(type(measure)(text.strip(), spec, measure.params, measure.cutoff))


# every method of a model that rpdi calls (the exact evaluator, the engines, the properties)
_CALLED = ("__init__", "step", "gains", "n_states", "state_values", "initial", "draw_start", "absorbed")


def _guarded(cls: type, text: str, path: str) -> type:
    """A subclass of the user's class whose methods turn an exception into an InputError naming
    the measure string, the file, the class and the method, whichever command calls them."""

    def guard(method_name):
        method = getattr(cls, method_name)

        @functools.wraps(method)  # inspect.unwrap finds the user's method (and its file)
        def call(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except InputError:
                raise
            except Exception as exc:
                reason = (str(exc).splitlines() or [""])[0]
                raise InputError(f"measure {text!r}: {path}: {cls.__name__}.{method_name} raised "
                                 f"{type(exc).__name__}: {reason}") from None

        return call

    return type(cls.__name__, (cls,), {name: guard(name) for name in _CALLED} | {"__module__": cls.__module__})
