"""Browsing models of one's own, named where a measure is named:

* a file, ``path/to/model.py:ClassName(param=value,...)@k``, relative to the working directory
  (or, in a config, to the config's folder first);
* a module on the Python path, ``mypkg.models:ClassName(param=value,...)@k`` (the example shipped
  with rpdi: ``rpdi.usermodels.examples.two_strikes:TwoStrikes(n=2)``);
* in Python, the class or an instance itself (``TwoStrikes``, ``TwoStrikes(n=3)``).

The class subclasses :class:`usermodels.base.BrowsingModel` and declares its parameters with
defaults in ``parameters`` (their types follow the defaults); see
``usermodels/examples/two_strikes.py``. It has no closed form: its value as a measure is its exact
expectation (:class:`usermodels.exact.ExactValue`), and rpdi gives its simulations and
properties with no change to rpdi itself.

Loading a model of one's own imports its file or module: it EXECUTES PYTHON CODE, also when a
config file someone sent you names it; name only files you trust. A file is executed once per
process. An exception raised in the model's code (``__init__``, ``step``, ``gains``, ...) becomes an
InputError naming the measure, the file, the class and the method.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import re
from dataclasses import replace

from rpdi.metrics.measures.registry import parse_declared
from rpdi.metrics.errors import InputError
from rpdi.usermodels.base import BrowsingModel
from rpdi.usermodels.exact import ExactValue

_FILE = re.compile(r"^(?P<path>.+?\.py):(?P<name>[A-Za-z_]\w*)(?P<rest>.*)$")
_MODULE = re.compile(r"^(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<name>[A-Za-z_]\w*)(?P<rest>.*)$")


def is_plugin(text: str) -> bool:
    """Whether ``text`` names a model of one's own (by file or by module)."""
    text = text.strip()
    return bool(_FILE.match(text) or _MODULE.match(text))


def plugin_path(text: str, base: str | None = None) -> str | None:
    """The source file of the model of one's own named by ``text`` (None for a measure of
    rpdi's); a module is located (its parent packages imported), not executed."""
    text = text.strip()
    match = _FILE.match(text)
    if match:
        return _locate(text, match.group("path"), base)
    match = _MODULE.match(text)
    if match is None:
        return None
    try:
        spec = importlib.util.find_spec(match.group("module"))
    except (ImportError, ValueError) as exc:
        raise InputError(f"measure {text!r}: module {match.group('module')!r} cannot be found: {exc}") from None
    if spec is None or spec.origin is None:
        raise InputError(f"measure {text!r}: no module {match.group('module')!r} on the Python path")
    return spec.origin


def anchored(text: str, base: str | None = None) -> str:
    """``text`` with the file of a model of one's own as an absolute path (found relative to
    ``base`` first, then to the working directory), so that it names the same file wherever it
    is loaded (a config's worker processes); other names are returned as they are."""
    match = _FILE.match(text.strip())
    if match is None:
        return text
    return _locate(text, match.group("path"), base) + ":" + match.group("name") + match.group("rest")


def load_plugin(text: str, base: str | None = None) -> BrowsingModel:
    """The model of one's own named by ``text``, a file path tried relative to ``base`` (a
    config's folder) first, then to the working directory."""
    text = text.strip()
    match = _FILE.match(text) or _MODULE.match(text)
    if match is None:
        raise InputError(f"measure {text!r}: expected path/to/model.py:ClassName(param=value,...)@k "
                         f"or package.module:ClassName(...)")
    name, rest = match.group("name", "rest")
    where = plugin_path(text, base) if "path" in match.groupdict() else match.group("module")
    try:
        cls = _guarded_class(where, name, "path" not in match.groupdict())
    except InputError as exc:
        raise InputError(f"measure {text!r}: {exc}") from None
    spec = replace(cls.declaration(), compute=ExactValue(cls, text))
    measure = parse_declared(name + rest, {name: spec})
    return cls(type(measure)(text, spec, measure.params, measure.cutoff))


def _locate(text: str, path: str, base: str | None) -> str:
    tried = [path] if os.path.isabs(path) or base is None else [os.path.join(base, path), path]
    for candidate in tried:
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
    raise InputError(f"measure {text!r}: {' or '.join(tried)}: no such file")


@functools.cache
def _guarded_class(where: str, name: str, is_module: bool) -> type:
    """The class ``name`` of the file or module ``where``, imported once per process, as a
    subclass whose methods report the model's errors as InputError."""
    if is_module:
        try:
            module = importlib.import_module(where)
        except Exception as exc:  # the user's module: report its error in one line
            raise InputError(f"{where}: cannot be imported: {type(exc).__name__}: {exc}") from None
    else:
        spec = importlib.util.spec_from_file_location(f"rpdi_plugin_{abs(hash(where))}", where)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # the user's file: report its error in one line
            raise InputError(f"{where}: cannot be loaded: {type(exc).__name__}: {exc}") from None
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BrowsingModel)):
        raise InputError(f"{where} defines no BrowsingModel subclass {name!r}")
    return _guarded(cls, where)


# every method of a model that rpdi calls (the exact evaluator, the engines, the properties)
_CALLED = ("__init__", "step", "gains", "n_states", "state_values", "initial", "draw_start", "absorbed")


def _guarded(cls: type, path: str) -> type:
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
                measure = getattr(self, "measure", args[0] if args else None)  # __init__'s argument
                text = getattr(measure, "text", cls.__name__)
                raise InputError(f"measure {text!r}: {path}: {cls.__name__}.{method_name} raised "
                                 f"{type(exc).__name__}: {reason}") from None

        return call

    return type(cls.__name__, (cls,), {name: guard(name) for name in _CALLED} | {"__module__": cls.__module__})
