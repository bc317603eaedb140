"""The figures of a comparison (experiments/compare_plots.py), read from the drawn figure: legends
clear of the data, a distinct look per measure and per pair."""

from __future__ import annotations

import numpy as np

from rpdi.experiments import compare_plots


def _clear_of_axes(legend):
    renderer = legend.figure.canvas.get_renderer()
    box = legend.get_window_extent(renderer)
    return not any(box.overlaps(ax.get_window_extent()) for ax in legend.figure.axes if ax.get_visible())


def _pair(measure, a, b, diff, significant, users=True):
    return {"measure": measure, "run_a": a, "run_b": b, "diff": diff, "ci_low": diff - 0.05, "ci_high": diff + 0.05,
            "significant": significant, "user_b_better": 0.5 + diff if users else None,
            "user_ci_low": 0.45 + diff if users else None, "user_ci_high": 0.55 + diff if users else None}


def test_forest_legend_is_under_the_panels(tmp_path, drawn):
    # one pair whose interval spans the upper left corner, where the legend was
    records = [_pair(m, "bm25", "ance", d, s) for m, d, s in (("ERR-IA@20", -0.19, True), ("AP", 0.01, False))]
    compare_plots.forest(records, str(tmp_path / "forest.png"), "t test")
    fig, = drawn
    assert not any(ax.get_legend() for ax in fig.axes)
    legend, = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["significant", "not significant"]
    assert _clear_of_axes(legend)


def test_asl_curves_differ_per_measure_and_the_legend_is_outside(tmp_path, drawn):
    rng = np.random.default_rng(1)
    power = [{"measure": f"M{k}", "asl": list(rng.uniform(size=10)), "significant": 3, "pairs": 10, "alpha": 0.05}
             for k in range(9)]
    compare_plots.asl_curves(power, str(tmp_path / "asl.png"), "t test")
    fig, = drawn
    ax, = fig.axes
    curves = ax.lines[:9]
    assert len({(c.get_color(), c.get_marker(), c.get_linestyle()) for c in curves}) == 9
    assert _clear_of_axes(ax.get_legend())


def test_intents_give_each_pair_its_own_colour(tmp_path, drawn):
    records = [{"measure": "ERR-IA@20", "run_a": "a", "run_b": b, "intent": j, "probability": 0.5 / j,
                "user_b_better": 0.3 + 0.1 * j, "ci_low": 0.2, "ci_high": 0.9, "significant": j == 1}
               for b in ("b", "c", "d") for j in (1, 2)]
    compare_plots.intents(records, str(tmp_path / "intents.png"))
    fig, = drawn
    legend, = fig.legends
    colours = [h.get_color() for h in legend.legend_handles]
    assert len(colours) == 3 and len(set(colours)) == 3
    assert _clear_of_axes(legend)
