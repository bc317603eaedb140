"""BetaRBP: the closed form (Beta moments) against numerical integration of RBP(p) over
Beta(a, b) with scipy.integrate, and against the exact browsing model."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import beta as beta_dist

from rpdi.metrics import parse_measure, rankings_from_grades, score
from rpdi.metrics.evaluate import compute
from rpdi.usermodels import exact, model_for


def _rbp(p, gains):
    i = np.arange(len(gains))
    return (1 - p) * float(np.sum(np.asarray(gains) * p ** i))


@pytest.mark.parametrize("a,b", [(1.0, 1.0), (8.0, 2.0), (2.0, 5.0), (0.5, 0.5), (3.0, 0.7)])
def test_closed_form_is_the_integral_of_rbp_over_the_beta(a, b):
    rng = np.random.default_rng(int(a * 10 + b))
    grades = rng.integers(0, 3, 40)
    gains = grades / grades.max()
    integral, _ = quad(lambda p: _rbp(p, gains) * beta_dist.pdf(p, a, b), 0, 1, limit=200,
                       epsabs=1e-12, epsrel=1e-10)
    assert abs(score(f"BetaRBP(a={a},b={b})", list(grades)) - integral) < 1e-8


def test_a_population_of_one_persistence_is_rbp():
    """A very concentrated Beta(800, 200) is close to RBP(0.8) users (mean 0.8, sd 0.013)."""
    g = "$$---$----$-----$---"
    assert abs(score("BetaRBP(a=800,b=200)", g) - score("RBP(p=0.8)", g)) < 2e-3


@pytest.mark.parametrize("name", ["BetaRBP(a=8,b=2)", "BetaRBP(a=2,b=5,rel=1)", "BetaRBP(a=1,b=1)"])
def test_exact_model_equals_closed_form(name):
    """The model at 64 Gauss-Jacobi nodes is exact for rankings up to depth 127."""
    rng = np.random.default_rng(7)
    for grades in ("$$---$----$-----$---", list(rng.integers(0, 3, 60)), list(rng.integers(0, 3, 120))):
        rankings = rankings_from_grades(grades)
        m = parse_measure(name)
        closed = compute(rankings, [m])[0].value[0, 0]
        assert abs(exact(model_for(m), rankings).value[0, 0] - closed) < 1e-9
