"""The figures of click models fitted to logs (experiments/clickplots.py), read from the drawn
figure: every label inside the saved figure, legends clear of the data, a look per model."""

from __future__ import annotations

import itertools
import os

import numpy as np

from rpdi.experiments.clickplots import plot_fit

N = 10  # ranks
LABELS = [("PBM", ""), ("UBM", ""), ("INSQ", "T=3.738±0.052"), ("INST", "T=4.16±0.053"), ("RBP", "p=0.8124±0.0019"),
          ("RBP2", "p1=0.8026±0.0061 p2=0.8137±0.0022"), ("CCM", "tau1=0.8184 tau2=0.9999 tau3=0.4379"),
          ("DBN", "gamma=0.8291±0.0019")]  # as the Yandex sample's fit labels them: the overview cut RBP2's off


def _record(k: int) -> dict:
    rng = np.random.default_rng(k)
    ctr = 0.3 / np.arange(1, N + 1)
    last = np.full(N + 1, 1 / (N + 1))
    gap = 0.0 if k == 0 else 0.05 * k
    curves = {"ctr_observed": ctr, "ctr_predicted": ctr + rng.normal(0, 0.01, N),
              "last_observed": last, "last_predicted": last + rng.normal(0, 0.01, N + 1)}
    for c in ("ctr", "last"):
        res = curves[f"{c}_observed"] - curves[f"{c}_predicted"]
        curves[f"{c}_residual_low"], curves[f"{c}_residual_high"] = res - 0.005, res + 0.005
    record = {"model": LABELS[k][0], "parameters": LABELS[k][1],
              "perplexity": 1.38 + gap / 10, "curves": curves}
    for c, scale in (("loglik", 1.0), ("perplexity", 0.1)):
        record |= {f"{c}_vs_best": scale * gap, f"{c}_vs_best_low": scale * (gap - 0.01),
                   f"{c}_vs_best_high": scale * (gap + 0.01), f"{c}_tied_best": k < 2}
    return record


def _outside_figure(fig) -> list[str]:
    """The panels of ``fig`` whose titles, labels, tick labels or legend cross the figure's edge
    (and so are cut off when it is saved)."""
    renderer = fig.canvas.get_renderer()
    return [ax.get_title() or ax.get_ylabel() for ax in fig.axes
            if not fig.bbox.contains(*ax.get_tightbbox(renderer).min) or not fig.bbox.contains(*ax.get_tightbbox(renderer).max)]


def _clear_of_axes(legend):
    box = legend.get_window_extent(legend.figure.canvas.get_renderer())
    return not any(box.overlaps(ax.get_window_extent()) for ax in legend.figure.axes)


def test_labels_inside_legends_outside_the_data_a_look_per_model(tmp_path, drawn):
    records = [_record(k) for k in range(len(LABELS))]
    pairs = [{"model_a": a["model"], "model_b": b["model"], "loglik_diff": b["loglik_vs_best"] - a["loglik_vs_best"],
              "loglik_low": -0.01, "loglik_high": 0.2} for a, b in itertools.combinations(records, 2)]
    written = plot_fit(records, pairs, str(tmp_path / "fit.png"), "8 models")
    assert [p.rsplit("/", 1)[1] for p in written] == ["fit.png", "fit_differences.png", "fit_calibration.png"]
    umask = os.umask(0)
    os.umask(umask)
    assert {os.stat(p).st_mode & 0o777 for p in written} == {0o666 & ~umask}  # not mkstemp's 0600
    overview, differences, calibration = drawn
    for fig in drawn:
        fig.set_dpi(110)  # as saved: the text's extents do not scale exactly with the dpi
        fig.canvas.draw()
        assert _outside_figure(fig) == []
    legend, = [ax.get_legend() for ax in overview.axes if ax.get_legend()]
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["observed", "PBM", "UBM", "INSQ", "INST", "RBP", "DBN"]  # the best five and the worst
    assert len({(h.get_color(), h.get_marker()) for h in legend.legend_handles}) == len(labels)
    assert _clear_of_axes(legend)
    legend, = [ax.get_legend() for ax in differences.axes if ax.get_legend()]
    assert _clear_of_axes(legend)
