"""Browsing models of one's own, named where a measure is named:

* a file, ``path/to/model.py:ClassName(param=value,...)@k``, relative to the working directory
  (or, in a config, to the config's folder first);
* a module on the Python path, ``mypkg.models:ClassName(param=value,...)@k`` (the example shipped
  with rpdi: ``rpdi.usermodels.examples.two_strikes:TwoStrikes(n=2)``);
* in Python, the class or an instance itself (``TwoStrikes``, ``TwoStrikes(n=3)``);
* its intent-aware user (:mod:`usermodels.intents`), ``path/to/model.py:ClassName-IA(...)@k``.

The class subclasses :class:`usermodels.base.BrowsingModel` and declares its parameters with
defaults in ``parameters`` (their types follow the defaults); see
``usermodels/examples/two_strikes.py``. It has no closed form: its value as a measure is its exact
expectation (:class:`usermodels.exact.ExactValue`), and rpdi gives its simulations and
properties with no change to rpdi itself.

Loading a model of one's own imports its file or module: it EXECUTES PYTHON CODE, also when a
config file someone sent you names it; name only files you trust. A file is executed once per
process. An exception raised in the model's code (``__init__``, ``step``, ``gains``, ...) becomes an
InputError naming the measure, the file, the class and the method; so do ``sys.exit()`` and a
``raise KeyboardInterrupt`` in it (a real Ctrl-C, a signal, still interrupts the command), and a
method returning what rpdi cannot use (``gains`` an array of another shape than the grades',
``step`` anything but a list of :class:`Branch` whose fields broadcast to the users' shape, ...).
The class's declaration is checked when it is loaded (:meth:`BrowsingModel.declaration`).

What the model's code prints goes to standard error: standard output carries rpdi's results
only (a debugging ``print`` in ``step`` must not corrupt a table or a JSON document). Only
Python's ``sys.stdout`` is redirected; a write to file descriptor 1 itself (``os.write(1, ...)``,
a subprocess) is not seen, and ``os._exit`` ends the process as it always does.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import importlib
import importlib.util
import numbers
import os
import re
import signal
import sys
from dataclasses import replace

import numpy as np

from rpdi.metrics.measures.registry import IA_SUFFIX, parse_declared
from rpdi.metrics.errors import InputError
from rpdi.usermodels.base import Branch, BrowsingModel
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
    if rest.startswith(IA_SUFFIX):  # X-IA of a model of one's own: its user, having drawn an intent
        from rpdi.usermodels.intents import IntentAware, intent_aware_measure

        inner = load_plugin(text.replace(name + IA_SUFFIX, name, 1), base)
        return IntentAware(inner, replace(intent_aware_measure(inner.measure), text=text))
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
    try:
        with _plugin_code():
            if is_module:
                module = importlib.import_module(where)
            else:
                spec = importlib.util.spec_from_file_location(f"rpdi_plugin_{abs(hash(where))}", where)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
    except BaseException as exc:  # the user's file or module: report its error in one line
        if not _model_fault(exc):
            raise
        raise InputError(f"{where}: cannot be {'imported' if is_module else 'loaded'}: "
                         f"{_described(exc)}") from None
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BrowsingModel)):
        raise InputError(f"{where} defines no BrowsingModel subclass {name!r}")
    try:
        cls.declaration()
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return _guarded(cls, where)


@contextlib.contextmanager
def _plugin_code():
    """While a model's own code runs, what it prints goes to standard error (standard output
    carries rpdi's results)."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _model_fault(exc: BaseException) -> bool:
    """Whether an exception out of a model's code is the model's fault, reported as bad input:
    any Exception, ``sys.exit()`` (SystemExit), and a KeyboardInterrupt that the code raised
    itself with a ``raise`` statement. A KeyboardInterrupt that a signal raised (Ctrl-C, or a
    handler of SIGINT or SIGTERM) while the code ran is an interruption: the signal arrives
    between two instructions of whatever runs, never at a ``raise``."""
    if isinstance(exc, (Exception, SystemExit)):
        return True
    if not isinstance(exc, KeyboardInterrupt) or exc.__traceback__ is None:
        return False
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    handlers = {getattr(signal.getsignal(s), "__code__", None) for s in (signal.SIGINT, signal.SIGTERM)}
    return code not in handlers and code.co_code[tb.tb_lasti] == dis.opmap["RAISE_VARARGS"]


def _described(exc: BaseException) -> str:
    """An exception in a few words: its type and the first line of its message."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    reason = (str(exc).splitlines() or [""])[0]
    return f"{type(exc).__name__}: {reason}" if reason else type(exc).__name__


# every method of a model that rpdi calls (the exact evaluator, the engines, the properties)
_CALLED = ("__init__", "step", "gains", "n_states", "state_values", "initial", "draw_start", "absorbed")


def _guarded(cls: type, path: str) -> type:
    """A subclass of the user's class whose methods (those it defines itself) turn an exception
    into an InputError naming the measure string, the file, the class and the method, and check
    what they return (:func:`_wrong_return`), whichever command calls them."""

    def guard(method_name):
        method = getattr(cls, method_name)

        @functools.wraps(method)  # inspect.unwrap finds the user's method (and its file)
        def call(self, *args, **kwargs):
            try:
                with _plugin_code():
                    result = method(self, *args, **kwargs)
            except InputError:
                raise
            except BaseException as exc:
                if not _model_fault(exc):
                    raise
                fail(self, args, f"raised {_described(exc)}")
            wrong = _wrong_return(method_name, self, args, result)
            if wrong:
                fail(self, args, f"returned {wrong}")
            return result

        def fail(self, args, what):
            measure = getattr(self, "measure", args[0] if args else None)  # __init__'s argument
            text = getattr(measure, "text", cls.__name__)
            raise InputError(f"measure {text!r}: {path}: {cls.__name__}.{method_name} {what}") from None

        return call

    own = [name for name in _CALLED if getattr(cls, name) is not getattr(BrowsingModel, name)]
    return type(cls.__name__, (cls,), {name: guard(name) for name in own} | {"__module__": cls.__module__})


def _wrong_return(method: str, model, args, result) -> str | None:
    """What is wrong with what a model's ``method`` returned for ``args`` (None: nothing)."""
    if method == "__init__":
        return None
    if method == "n_states":
        ok = isinstance(result, numbers.Integral) and not isinstance(result, bool) and result >= 1
        return None if ok else f"{result!r}, not a whole number >= 1"
    if method == "step":
        return _wrong_branches(result, args[0], args[1])
    shape = {"gains": lambda grade, view: np.shape(grade),
             "state_values": lambda view: (model.n_states(view),),
             "initial": lambda view: np.shape(view.length) + (model.n_states(view),),
             "draw_start": lambda rng, users, start, values: (users,),
             "absorbed": lambda state, rank: None}[method](*args)
    what = {"gains": "the grades'", "state_values": "(n_states,)", "initial": "(runs, topics, n_states)",
            "draw_start": "(users,)"}.get(method)
    values = np.asarray(result)
    if values.dtype.kind not in "biuf":
        return f"{_kind(result)}, not numbers"
    if shape is None:  # absorbed: True/False, or one per state
        return _not_broadcast(values, np.shape(args[0]), "the states'")
    if values.shape != shape:
        return f"an array of shape {values.shape}, not {what} shape {shape}"
    if method == "initial" and not ((values >= 0) & (values <= 1)).all():
        return "start probabilities outside [0, 1]"
    return None


def _wrong_branches(branches, state, at) -> str | None:
    """What is wrong with what ``step`` returned: a list of Branch whose fields are numbers
    that broadcast to the users' shape (that of the states and the gains together)."""
    if not isinstance(branches, (list, tuple)) or not all(isinstance(b, Branch) for b in branches):
        return f"{_kind(branches)}, not a list of Branch"
    users = np.broadcast_shapes(np.shape(state), np.shape(at.gain))
    for b, branch in enumerate(branches):
        for field in ("prob", "gain", "cont", "state", "time"):
            value = getattr(branch, field)
            if value is None and field == "state":
                continue
            values = np.asarray(value)
            if values.dtype.kind not in "biuf":
                return f"branch {b} with {field} {_kind(value)}, not numbers"
            wrong = _not_broadcast(values, users, "the users'")
            if wrong:
                return f"branch {b} with {field} {wrong}"
    return None


def _not_broadcast(values: np.ndarray, shape: tuple, whose: str) -> str | None:
    try:
        if np.broadcast_shapes(values.shape, shape) == shape:
            return None
    except ValueError:
        pass
    return f"of shape {values.shape}, which does not broadcast to {whose} shape {shape}"


def _kind(value) -> str:
    """What a returned value is, in a few words (``None``, ``a str``, ``an array of object``)."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype}"
    return f"a {type(value).__name__}"
