"""Plots of an experiment (matplotlib, Agg backend), each written atomically as PNG and SVG, and
the shared style of every figure the project draws: a colour-blind-safe palette with markers and
line styles (:func:`style`), legends outside the data (:func:`legend_outside`), a figure that
says why it is empty (:func:`empty`)."""

from __future__ import annotations

import io
import math
import os
from collections import defaultdict

import numpy as np

from rpdi.experiments.store import write_atomic

# Okabe & Ito's colour-blind-safe palette, without its yellow (too faint on white)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
MARKERS = ("o", "s", "^", "D", "v")  # 5 and 7 coprime: colour and marker repeat together only after 35
LINESTYLES = ("-", "--", ":")


def style(k: int) -> dict:
    """The colour, marker and line style of the ``k``-th line of a figure: no two of the first 35
    alike (a line style more for each round of the palette).

    >>> style(0) == style(35), style(0) == style(7)
    (False, False)
    """
    return {"color": PALETTE[k % len(PALETTE)], "marker": MARKERS[k % len(MARKERS)],
            "ls": LINESTYLES[k // len(PALETTE) % len(LINESTYLES)]}


def _pyplot():
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure(size: tuple[float, float], panels: int = 1):
    """A new figure of ``panels`` axes (a grid of at most three columns for several), laid out
    so that no title or label overlaps another."""
    plt = _pyplot()
    if panels == 1:
        return plt.subplots(figsize=size, layout="constrained")
    cols = min(3, panels)
    rows = math.ceil(panels / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(size[0] * cols / 2, 0.5 + size[1] * rows / 1.6),
                             squeeze=False, layout="constrained")
    for ax in axes.ravel()[panels:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:panels]


def legend_outside(ax, **kwargs):
    """The legend of ``ax``, right of its axes (clear of the data); none if nothing is labelled."""
    if ax.get_legend_handles_labels()[0]:
        return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, fontsize=8, **kwargs)
    return None


def empty(path: str, title: str, why: str) -> list[str]:
    """A figure that only says why there is nothing to draw (``path`` and its SVG twin)."""
    fig, ax = _figure((6, 2))
    ax.set_axis_off()
    ax.text(0.5, 0.5, why, ha="center", va="center", fontsize=10, wrap=True, transform=ax.transAxes)
    ax.set_title(title, fontsize=10)
    return _finish(fig, path)


def _finish(fig, path: str, ax=None, title: str = "", xlabel: str = "", ylabel: str = "") -> list[str]:
    """Title and label ``ax`` (if given), add a legend right of it if anything is labelled, write
    ``path`` (.png) and its .svg twin; the paths written."""
    import matplotlib
    import matplotlib.pyplot as plt

    if ax is not None:
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        ax.title.set_fontsize(10)
        legend_outside(ax)
    written = []
    for fmt in ("png", "svg"):
        buf = io.BytesIO()
        with matplotlib.rc_context({"svg.fonttype": "none"}):  # SVG text stays text: smaller, editable
            fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight")
        written.append(os.path.splitext(path)[0] + "." + fmt)
        write_atomic(written[-1], buf.getvalue())
    plt.close(fig)
    return written


def _named(measures) -> str:
    measures = list(measures)
    return ", ".join(measures) if len(measures) <= 3 else f"{len(measures)} measures"


def agreement(records: list[dict], path: str) -> list[str]:
    """Simulated estimate against the exact expectation, per (run, topic), 95% intervals; one
    panel per measure, each with its own scale (TBG's values near 6 would squeeze a measure in
    [0, 1] into a corner of a shared one)."""
    title = "Simulated users against the exact browsing model"
    by_measure = defaultdict(list)
    for r in records:
        if r["topic"] != "all" and r["estimate"] is not None and r["exact"] is not None:
            by_measure[r["measure"]].append(r)
    if not by_measure:
        return empty(path, title, "No users were simulated (users = 0): no estimate to set against the exact one.")
    fig, axes = _figure((6, 4.4), len(by_measure))
    for ax, (measure, rows) in zip(np.atleast_1d(axes), by_measure.items()):
        x = np.array([r["exact"] for r in rows])
        y = np.array([r["estimate"] for r in rows])
        e = 1.96 * np.array([r["stderr"] for r in rows])
        ax.errorbar(x, y, yerr=e, fmt="o", ms=3, alpha=0.6, color=PALETTE[0], ecolor=PALETTE[5])
        lo, hi = min(x.min(), y.min()), max(x.max(), y.max())
        ax.plot([lo, hi], [lo, hi], color="k", ls="--", lw=1)
        ax.set_title(measure, fontsize=9)
        ax.tick_params(labelsize=8)
    fig.suptitle(f"{title}: one point per (run, topic); dashed, estimate = exact", fontsize=10)
    fig.supxlabel("exact expectation", fontsize=9)
    fig.supylabel("simulated estimate (bar: 95% interval)", fontsize=9)
    return _finish(fig, path)


def zscores(records: list[dict], path: str) -> list[str]:
    """Distribution of per-topic z-scores against the standard normal density."""
    rows = [r for r in records if r["topic"] != "all" and r["z"] is not None]
    title = "z-scores of the simulated estimates per (run, topic)"
    if not rows:
        return empty(path, title, "No users were simulated (users = 0): no z-scores.")
    z = np.array([r["z"] for r in rows])
    fig, ax = _figure((6, 4))
    ax.hist(z, bins=30, density=True, color=PALETTE[5], label=f"{z.size} z-scores")
    grid = np.linspace(-4, 4, 200)
    ax.plot(grid, np.exp(-grid ** 2 / 2) / np.sqrt(2 * np.pi), "k-", lw=1, label="N(0, 1)")
    measures = dict.fromkeys(r["measure"] for r in rows)
    return _finish(fig, path, ax, f"{title}: {_named(measures)}", "z = (estimate - exact) / stderr", "density")


def stopping(results: list[dict], path: str) -> list[str]:
    """The stopping-depth distribution L(i) of every measure's browsing model, averaged over the
    runs of each task's mean over topics; one panel per measure, each with its own scale, so
    that one model's spike (P@k stops at k with probability 1) does not flatten the others."""
    from matplotlib.ticker import MaxNLocator

    title = "Where each measure's user stops"
    by_measure = defaultdict(list)
    for res in results:
        if res["stop"]:
            by_measure[res["measure"]].append(np.array(res["stop"]))
    if not by_measure:
        return empty(path, title, "No browsing model was evaluated: no stopping distribution.")
    fig, axes = _figure((7, 4), len(by_measure))
    for ax, (measure, stops) in zip(np.atleast_1d(axes), by_measure.items()):
        width = min(50, max(len(s) for s in stops))  # the first 50 ranks; past its end L(i) = 0
        mean = np.mean([np.pad(s[:width], (0, width - len(s[:width]))) for s in stops], axis=0)
        ax.stairs(mean, np.arange(0.5, width + 1), fill=True, color=PALETTE[0])  # one artist, not a bar per rank
        ax.set_xlim(0.3, width + 0.7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(measure, fontsize=9)
        ax.tick_params(labelsize=8)
    fig.suptitle(title, fontsize=10)
    fig.supxlabel("rank i at which the user stops", fontsize=9)
    fig.supylabel("L(i), mean over topics, then runs", fontsize=9)
    return _finish(fig, path)


def template(measure: str, name: str) -> str:
    """A measure's name template with its parameter ``name`` written as the variable.

    >>> template("RBP(p={p})", "p"), template("nDCG@{k}", "k")
    ('RBP(p)', 'nDCG@k')
    """
    return measure.replace(f"{name}={{{name}}}", name).replace(f"{{{name}}}", name)


def parameter(measure: str, name: str, xs: list[float], curves: dict[str, tuple], path: str) -> list[str]:
    """A metric against its parameter, one line per run (left), and its residual, what the
    unjudged documents could still add, per run (right); Moffat & Zobel's Figure 6."""
    shown = template(measure, name)
    title = f"{shown} against {name}, per run"
    if not curves:
        return empty(path, title, "No run has a value at every value of the parameter.")
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    for k, (run, (value, upper)) in enumerate(curves.items()):
        axes[0].plot(xs, value, ms=4, label=run, **style(k))
        axes[1].plot(xs, np.subtract(upper, value), ms=4, **style(k))
    axes[0].set(xlabel=name, ylabel="mean over topics", title="value (lower bound)")
    axes[1].set(xlabel=name, ylabel="mean over topics", title="residual: what unjudged documents could add")
    for ax in axes:
        ax.title.set_fontsize(9)
    fig.legend(loc="outside right upper", fontsize=8, title="run", title_fontsize=8)
    fig.suptitle(title, fontsize=10)
    return _finish(fig, path)


def residual_depth(depths: list[int], curves: dict[str, tuple], path: str) -> list[str]:
    """Lower and upper bounds of a score against the evaluation depth (Figure 5)."""
    fig, ax = _figure((6.5, 4))
    for k, (label, (lower, upper)) in enumerate(curves.items()):
        look = style(k) | {"ls": "-"}
        ax.plot(depths, lower, ms=4, label=label, **look)
        ax.plot(depths, upper, ms=4, **(look | {"ls": "--", "mfc": "white"}))
    return _finish(fig, path, ax, f"Score bounds of {_named(curves)} against evaluation depth\n"
                                  "solid: lower bound; dashed: upper bound (lower + residual)",
                   "evaluation depth (ranks)", "score, mean over runs and topics")


def all_plots(out_dir: str, records, results, extra: list[tuple]) -> list[str]:
    """The standard plots, plus ``extra`` (function, args) ones; paths written."""
    plots = os.path.join(out_dir, "plots")
    written = (agreement(records, os.path.join(plots, "agreement.png"))
               + zscores(records, os.path.join(plots, "zscores.png"))
               + stopping(results, os.path.join(plots, "stopping.png")))
    for fn, args in extra:
        written += fn(*args)
    return written


def per_rank(view, path: str, fmt: str, title: str) -> str:
    """C(i), W(i) and L(i) of :func:`rpdi.usermodels.per_rank.per_rank` against the rank, one
    panel each, written to ``path`` as ``fmt`` (png or svg), atomically; returns the path."""
    import matplotlib
    from matplotlib.ticker import MaxNLocator

    plt = _pyplot()
    ranks = np.arange(1, view.L.size + 1)
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(6, 6.5), layout="constrained")
    axes[0].plot(ranks, view.C, "o-", ms=3, color=PALETTE[0])
    axes[0].set(ylabel="C(i)", ylim=(-0.05, 1.05), title=title.replace("$", r"\$"))  # $ is not mathtext
    axes[1].bar(ranks, view.W, width=0.8, color=PALETTE[0])
    axes[1].set(ylabel="W(i)")
    axes[2].bar(ranks, view.L, width=0.8, color=PALETTE[1])
    axes[2].set(ylabel="L(i)", xlabel="rank i")
    axes[2].xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].title.set_fontsize(10)
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight")
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return path
