"""The C/W/L view of a browsing model (usermodels/per_rank.py) against the RBP paper's weights,
P@k's, hand-computed stopping ranks of the two_strikes example, and the closed forms."""

from __future__ import annotations


import numpy as np
import pytest

from rpdi.choices import TABLE_II_RANKING
from rpdi.metrics.evaluate import rankings_from_grades, score
from rpdi.usermodels import model_for
from rpdi.usermodels.per_rank import per_rank

TWO_STRIKES = "rpdi.usermodels.examples.two_strikes:TwoStrikes"


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_rbp_has_the_rbp_paper_s_weights_and_expected_depth(p):
    """Moffat & Zobel (2008): W(i) = (1 - p) p^(i-1), E[N] = 1/(1 - p), C(i) = p."""
    view = per_rank(model_for(f"RBP(p={p})"), rankings_from_grades(TABLE_II_RANKING), 20)
    i = np.arange(1, 21)
    assert np.allclose(view.W, (1 - p) * p ** (i - 1), rtol=1e-12, atol=0)
    assert np.allclose(view.L, (1 - p) * p ** (i - 1), rtol=1e-9, atol=0)
    assert np.allclose(view.C, p, rtol=1e-12)
    assert view.expected_depth == pytest.approx(1 / (1 - p), rel=1e-12)  # the horizon's rounding
    assert view.value == pytest.approx(score(f"RBP(p={p})", TABLE_II_RANKING), rel=1e-12)
    assert view.upper - view.value == pytest.approx(p ** 20, rel=1e-9)  # the paper's residual
    assert view.start_states == 1 and view.never == 0


def test_precision_at_10_weighs_ranks_1_to_10_alike():
    view = per_rank(model_for("P@10"), rankings_from_grades(TABLE_II_RANKING), 20)
    assert np.array_equal(view.W, [0.1] * 10 + [0.0] * 10)
    assert np.array_equal(view.L, [0.0] * 9 + [1.0] + [0.0] * 10)
    assert view.expected_depth == 10 and view.value == pytest.approx(0.3)


def _stop_rank(ranking: str, n: int, k: int | None = None) -> int:
    """By hand: the rank where a user who leaves after n non-relevant documents in a row (or at
    rank k) stops; past the ranking's end every document counts as non-relevant."""
    misses, rank = 0, 0
    while True:
        rank += 1
        misses = 0 if rank <= len(ranking) and ranking[rank - 1] == "$" else misses + 1
        if misses == n or rank == k:
            return rank


@pytest.mark.parametrize("ranking, k, stop", [("$-$--$", None, 5), ("$$-", None, 4), ("--$", None, 2),
                                              ("$-$-$-$", 3, 3)])
def test_two_strikes_stops_where_a_hand_count_says(ranking, k, stop):
    assert _stop_rank(ranking, 2, k) == stop  # the hand count itself
    name = TWO_STRIKES + "(n=2)" + (f"@{k}" if k else "")
    view = per_rank(model_for(name), rankings_from_grades(ranking), 8)
    expected = np.zeros(8)
    expected[stop - 1] = 1.0
    assert np.array_equal(view.L, expected)
    assert np.array_equal(view.reach, (np.arange(1, 9) <= stop).astype(float))
    assert view.expected_depth == stop
    assert view.value == pytest.approx(ranking[:stop].count("$") / stop)  # rate: relevant read / read


@pytest.mark.parametrize("measure", ["AP", "RR", "nDCG@10", "INST", "SDCG@10", "RBP2"])
def test_weights_times_gains_give_the_closed_form(measure):
    """A user who accrues each document's gain as read has the value sum_i W(i) g(i): the
    mean_rate weights (AP: averaged over the drawn target) and the normalised ones included."""
    view = per_rank(model_for(measure), rankings_from_grades(TABLE_II_RANKING), 20)
    assert view.weighted == pytest.approx(score(measure, TABLE_II_RANKING), rel=1e-9)
    assert view.value == pytest.approx(score(measure, TABLE_II_RANKING), rel=1e-9)


def test_ap_averages_over_its_drawn_target():
    """Five relevant documents: five targets; W(1) = sum over the stopping ranks j of L(j)/j."""
    view = per_rank(model_for("AP"), rankings_from_grades(TABLE_II_RANKING), 20)
    stops = [1, 2, 6, 11, 17]  # where the s-th relevant document stands, s = 1..5
    assert view.start_states == 5
    assert np.allclose(view.L[np.array(stops) - 1], 0.2) and view.L.sum() == pytest.approx(1.0)
    assert view.W[0] == pytest.approx(sum(0.2 / j for j in stops))


def test_an_undefined_value_has_no_weights():
    view = per_rank(model_for("AP"), rankings_from_grades("---"), 3)
    assert np.isnan(view.value) and np.isnan(view.W).all()
