"""How much simulation a request asks for, estimated before any user is simulated.

The work is counted in user-document steps: for every ranking simulated, the number of users
times the expected number of documents a user reads there, E[N], which the exact evaluator gives
first. With ``target_stderr`` the users of a ranking are those its exact variance asks for,
Var / target_stderr^2 (at least two blocks, at most ``max_users``). What would take longer than
:data:`TIME_LIMIT` seconds on one core at the engine's speed (:data:`STEPS_PER_SECOND`: 10^10
steps with the vector engine, 6 * 10^7 with the agent engine) is refused unless forced
(``--force``, or ``force = true`` in a config's ``[experiment]``).

>>> from rpdi.simulate.work import work_text
>>> work_text(3.2e10, "vector")
'about 3.2e+10 user-document steps (~1.8 h at 5e+06 steps a second with the vector engine)'
"""

from __future__ import annotations

import math
import sys

import numpy as np

from rpdi.metrics.errors import InputError
from rpdi.simulate.ranking import BLOCK

TIME_LIMIT = 2000.0  # seconds of simulation on one core run without --force
STEPS_PER_SECOND = {"vector": 5e6, "agent": 3e4}  # orders of magnitude on one core (RBP, ERR on CAsT)


def steps(expectations, present: np.ndarray, users: int, target_stderr: float | None,
          max_users: int) -> float:
    """Estimated user-document steps of simulating every model's present, defined rankings."""
    total = 0.0
    for ex in expectations:
        simulated = present & np.isfinite(ex.value)
        depth = np.nan_to_num(ex.reach.sum(axis=-1), nan=ex.model.horizon, posinf=ex.model.horizon)
        if target_stderr is None:
            n = np.full(depth.shape, _count(users))
        else:
            n = np.clip(users_needed(ex.variance[ex.model.aggregation], target_stderr), 2 * BLOCK, _count(max_users))
        total += float((n * depth)[simulated].sum())
    return total


def users_needed(variance: np.ndarray, target_stderr: float) -> np.ndarray:
    """Users whose mean has standard error ``target_stderr`` when one user's outcome has this
    variance: ceil((sd / target)^2); infinite where that overflows (a target too small for any
    number of users, e.g. 1e-300, whose square is 0 in floating point) or the variance is not
    finite, so that a cap binds. Written without target_stderr^2, whose underflow to 0 made a
    division by zero.

    >>> users_needed(np.array([0.25, 0.0, np.nan]), 0.01).tolist()
    [2500.0, 0.0, inf]
    >>> users_needed(np.array([0.25]), 1e-300).tolist()
    [inf]
    """
    sd = np.sqrt(np.where(np.isfinite(variance), np.maximum(variance, 0.0), np.inf))
    with np.errstate(over="ignore"):
        return np.ceil((sd / target_stderr) ** 2)


def _count(users: int) -> float:
    """A number of users as a float: infinite beyond the largest float (``--users 10**400`` is
    refused as too much work, not a failed conversion)."""
    return float(users) if users <= sys.float_info.max else math.inf


def work_text(work: float, engine: str) -> str:
    if math.isinf(work):
        return "more user-document steps than a float can count"
    hours = work / STEPS_PER_SECOND[engine] / 3600
    when = f"{hours:.2g} h" if hours >= 1 else f"{hours * 60:.2g} min"
    return (f"about {work:.2g} user-document steps (~{when} at {STEPS_PER_SECOND[engine]:.0e} steps a second "
            f"with the {engine} engine)")


def check_work(work: float, engine: str, force: bool) -> None:
    """InputError with the estimate when ``work`` would take the engine longer than TIME_LIMIT
    and is not forced."""
    if work > TIME_LIMIT * STEPS_PER_SECOND[engine] and not force:
        raise InputError(f"simulation too large: {work_text(work, engine)}, more than the "
                         f"{TIME_LIMIT / 60:.0f} min allowed; use fewer users (or a larger target stderr), "
                         f"or --force (config: force = true)")
