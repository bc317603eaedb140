"""NPV's user (usermodels/npv.py) is RBP's with p = 1/(1 + rate): the same value, the same
expectations, and fitted to clicks, the same user."""

from __future__ import annotations

import pytest

from rpdi.experiments.bundled import YANDEX_SESSIONS
from rpdi.metrics.clicklogs import read_clicklog
from rpdi.metrics.evaluate import rankings_from_grades, score
from rpdi.usermodels import exact, model_for
from rpdi.usermodels.clickfit import fit


@pytest.mark.parametrize("rate", [0.1, 0.25, 3.0])
def test_npv_is_rbp_with_persistence_one_over_one_plus_rate(rate):
    grades = [2, 0, 1, 0, 0, 2, None, 1]  # None: unjudged
    ranking = dict(grades=[g or 0 for g in grades], judged=[g is not None for g in grades])
    p = 1 / (1 + rate)
    assert score(f"NPV(rate={rate})", **ranking) == pytest.approx(score(f"RBP(p={p!r})", **ranking), rel=1e-12)
    rankings = rankings_from_grades(**ranking)
    npv, rbp = exact(model_for(f"NPV(rate={rate})"), rankings), exact(model_for(f"RBP(p={p!r})"), rankings)
    for key in ("rate", "total", "depth"):
        assert npv.values[key] == pytest.approx(rbp.values[key], rel=1e-12)
        assert npv.upper[key] == pytest.approx(rbp.upper[key], rel=1e-12)


def test_fitted_to_clicks_npv_is_the_rbp_user():
    _, log = read_clicklog(YANDEX_SESSIONS).split(0.1, seed=0)
    npv, rbp = fit("NPV", log, stderr=False), fit("RBP", log, stderr=False)
    assert 1 / (1 + npv.params["rate"]) == pytest.approx(rbp.params["p"], abs=1e-3)
    assert npv.measure.startswith("NPV(rate=")
