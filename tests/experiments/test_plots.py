"""The figures of an experiment (experiments/plots.py), read from the drawn figure rather than its
pixels: one panel per measure where scales differ, titles without a name template's braces, a
distinct look per run, legends and titles clear of the data and of each other, and a figure that
says so when there is nothing to draw."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rpdi.experiments import plots


def _renderer(fig):
    return fig.canvas.get_renderer()


def _extent(artist):
    return artist.get_window_extent(_renderer(artist.figure))


def _visible_axes(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison]


def _clear_of_axes(legend):
    """The legend's box overlaps no axes' data area of its figure."""
    box = _extent(legend)
    return not any(box.overlaps(ax.get_window_extent()) for ax in _visible_axes(legend.figure))


def _legend(fig):
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == 1
    return legends[0]


def _records(measures: dict[str, float], topics: int = 6, users: bool = True) -> list[dict]:
    """Per-topic records of :func:`plots.agreement` and :func:`plots.zscores`: each measure's exact
    values spread over [0, scale]."""
    rng = np.random.default_rng(3)
    out = []
    for measure, scale in measures.items():
        for t in range(topics):
            exact = scale * (t + 1) / topics
            out.append({"measure": measure, "run": "r", "topic": str(t), "exact": exact,
                        "estimate": exact + rng.normal(0, 0.01 * scale) if users else None,
                        "stderr": 0.01 * scale if users else None, "z": rng.normal() if users else None})
    return out


def test_the_styles_of_the_first_35_lines_differ():
    looks = [tuple(plots.style(k).values()) for k in range(35)]
    assert len(set(looks)) == 35
    assert "#F0E442" not in plots.PALETTE  # Okabe-Ito's yellow: too faint on white


def test_agreement_gives_each_measure_its_own_panel_and_scale(tmp_path, drawn):
    plots.agreement(_records({"RR": 1.0, "TBG": 6.0, "P@10": 1.0}), str(tmp_path / "agreement.png"))
    fig, = drawn
    axes = _visible_axes(fig)
    assert [ax.get_title() for ax in axes] == ["RR", "TBG", "P@10"]
    assert axes[0].get_ylim()[1] < 1.5 and axes[1].get_ylim()[1] > 5  # RR is not squeezed by TBG


@pytest.mark.parametrize("plot", [plots.agreement, plots.zscores])
def test_no_simulation_is_a_figure_that_says_so(tmp_path, drawn, plot):
    written = plot(_records({"RR": 1.0}, users=False), str(tmp_path / "figure.png"))
    assert [p.rsplit(".", 1)[1] for p in written] == ["png", "svg"]
    fig, = drawn
    assert not _visible_axes(fig)  # no empty axes, no lone N(0, 1) curve
    assert any("users = 0" in t.get_text() for ax in fig.axes for t in ax.texts)


def test_zscores_legend_is_clear_of_the_histogram(tmp_path, drawn):
    plots.zscores(_records({"RR": 1.0, "AP": 1.0}, topics=40), str(tmp_path / "zscores.png"))
    fig, = drawn
    assert _clear_of_axes(_legend(fig))


def test_parameter_titles_the_template_and_keeps_runs_apart(tmp_path, drawn):
    xs = [0.5, 0.8, 0.95]
    curves = {f"sys{k:02d}": ([0.1 + k / 20] * 3, [0.1 + k / 20 + r for r in (0.0, 0.01, 0.1)]) for k in range(12)}
    plots.parameter("RBP(p={p})", "p", xs, curves, str(tmp_path / "parameter.png"))
    fig, = drawn
    title = fig.get_suptitle()
    assert "{" not in title and title.startswith("RBP(p) against p")
    value, residual = _visible_axes(fig)
    looks = {(line.get_color(), line.get_marker(), line.get_linestyle()) for line in value.lines}
    assert len(value.lines) == 12 and len(looks) == 12
    assert not value.collections and not residual.collections  # no bands over the lines
    np.testing.assert_allclose(residual.lines[0].get_ydata(), [0.0, 0.01, 0.1])
    legend = _legend(fig)
    assert len(legend.get_texts()) == 12 and _clear_of_axes(legend)


def test_template_writes_the_parameter_as_the_variable():
    assert plots.template("RBP(rel=2,p={p})@20", "p") == "RBP(rel=2,p)@20"


def test_residual_depth_legend_hides_no_line(tmp_path, drawn):
    depths = [5, 10, 20, 50, 100, 200]
    curves = {f"RBP(p={p})": ([p / 2] * 6, [p / 2 + p ** d for d in depths]) for p in (0.5, 0.8, 0.95)}
    plots.residual_depth(depths, curves, str(tmp_path / "residual_depth.png"))
    fig, = drawn
    legend = _legend(fig)
    assert [t.get_text() for t in legend.get_texts()] == list(curves)  # one entry per measure
    assert _clear_of_axes(legend)


def test_stopping_titles_overlap_nothing(tmp_path, drawn):
    # six rows of panels: the layout before put the figure's title on the first row's titles
    results = [{"measure": f"RBP(p=0.{k})@{n}", "stop": list(np.full(n, 1 / n))}
               for k in range(1, 7) for n in (10, 20, 50)]
    plots.stopping(results, str(tmp_path / "stopping.png"))
    fig, = drawn
    texts = {t.get_text(): _extent(t) for t in [fig._suptitle] + [ax.title for ax in _visible_axes(fig)]}
    for a, b in itertools.combinations(texts, 2):
        assert not texts[a].overlaps(texts[b]), (a, b)


def test_stopping_with_no_browsing_model_says_so(tmp_path, drawn):
    plots.stopping([{"measure": "RR", "stop": []}], str(tmp_path / "stopping.png"))
    fig, = drawn
    assert not _visible_axes(fig)
    assert any("No browsing model" in t.get_text() for ax in fig.axes for t in ax.texts)
