"""Per-user outcome distributions agree with the exact stopping distribution L(i)."""

import numpy as np
from scipy.stats import chisquare

from rpdi.metrics import rankings_from_grades
from rpdi.metrics.view import View
from rpdi.simulate.outcomes import outcome_distributions
from rpdi.metrics.seeds import stream
from rpdi.simulate.ranking import rankings_for
from rpdi.usermodels import exact, model_for


def _setup(name, grades, **kw):
    model = model_for(name)
    rankings = rankings_from_grades(grades, **kw)
    row = rankings_for(model, View(rankings, model.k), "unknown")[0, 0]
    return model, rankings, row


def test_depth_histogram_matches_exact_stopping_distribution():
    """The simulated users' depths follow L(i) of the exact evaluator (chi-square, fixed seed);
    a stopping distribution shifted by one rank is rejected."""
    model, rankings, row = _setup("SDCG@10", "$$---$----$-----$---")
    users = 20000
    d = outcome_distributions(model, row, users, stream(3, "outcomes"), bins=10)
    counts = np.array(d["depth"]["histogram"]["counts"])
    L = exact(model, rankings).stop[0, 0][:10]
    expected = users * L / L.sum()
    assert chisquare(counts, expected).pvalue > 1e-3
    shifted = users * np.roll(L, 1) / L.sum()
    shifted[0] = users * 1e-9
    assert chisquare(counts, shifted * counts.sum() / shifted.sum()).pvalue < 1e-6


def test_quantiles_of_a_geometric_depth():
    """RBP(p=0.5) users read a geometric number of documents: P(N <= 1) = 1/2, so the 25%
    quantile is 1; P(N <= 4) = 15/16 < 0.95 <= P(N <= 5) = 31/32, so the 95% quantile is 5."""
    model, _, row = _setup("RBP(p=0.5)", [1] * 30)
    q = outcome_distributions(model, row, 20000, stream(4, "q"))["depth"]["quantiles"]
    assert q[0.25] == 1.0
    assert q[0.95] == 5.0


def test_users_who_never_stop_are_counted():
    """Robertson's AP user whose target is not retrieved reads for ever: 2 of R = 7 targets."""
    model, rankings, row = _setup("AP", "$$---$----$-----$---", R=7)
    d = outcome_distributions(model, row, 14000, stream(5, "never"))
    never = exact(model, rankings).never[0, 0]
    assert abs(never - 2 / 7) < 1e-12
    assert abs(d["depth"]["never"] - never) < 4 * np.sqrt(never * (1 - never) / 14000)
