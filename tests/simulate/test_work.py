"""The work estimate of a simulation (simulate/work.py): how many users a target standard error
asks for, and the steps that the limit is checked against, with no numeric error whatever the
settings (issue 24: ``--target-stderr 1e-300`` squared to 0 and divided by it)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from rpdi.metrics import build_rankings, load_qrels, load_runs
from rpdi.metrics.errors import InputError
from rpdi.simulate.ranking import BLOCK
from rpdi.simulate.work import check_work, steps, users_needed
from rpdi.usermodels import exact, model_for

QRELS = {"1": {"d1": 1, "d2": 0}, "2": {"d1": 1}}
RUNS = {"t": {"1": {"d1": 2.0, "d2": 1.0}, "2": {"d1": 1.0}}}


def test_users_needed_by_definition():
    # n = Var / target^2: 0.25 / 0.01^2 = 2500; an undefined variance asks for every user allowed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        n = users_needed(np.array([0.25, 0.0, np.nan, np.inf]), 0.01)
        tiny = users_needed(np.array([0.25, 0.0]), 1e-300)  # 1e-300 ** 2 is 0.0 in floating point
    assert n.tolist() == [2500.0, 0.0, math.inf, math.inf]
    assert tiny.tolist() == [math.inf, 0.0]


def _expectations():
    rankings = build_rankings(load_qrels(QRELS), load_runs(RUNS))
    return [exact(model_for("RBP(p=0.8)"), rankings)], rankings.present


def test_an_unreachable_target_makes_the_cap_bind():
    """RBP(p=0.8)'s user reads E[N] = (1 - 0.8^10000) / 0.2 = 5 documents; with a target no number
    of users reaches, every ranking gets max_users: 2 rankings x 20000 users x 5 documents."""
    expectations, present = _expectations()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert steps(expectations, present, 0, 1e-300, 20_000) == pytest.approx(2 * 20_000 * 5, rel=1e-12)
        # a target any user meets: two blocks of users each (what the sequential sampler needs)
        assert steps(expectations, present, 0, 1e300, 10 ** 6) == pytest.approx(2 * 2 * BLOCK * 5, rel=1e-12)


@pytest.mark.parametrize("users, max_users, target", [(10 ** 400, 1, None), (0, 10 ** 400, 1e-300)],
                         ids=["users", "max_users"])
def test_more_users_than_a_float_holds_are_refused_as_work(users, max_users, target):
    """Before: 'int too large to convert to float', reported as a numeric error (status 1)."""
    expectations, present = _expectations()
    work = steps(expectations, present, users, target, max_users)
    assert work == math.inf
    with pytest.raises(InputError, match="^simulation too large: more user-document steps than a float can count"):
        check_work(work, "vector", force=False)
