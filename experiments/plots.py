"""Plots of an experiment (matplotlib, Agg backend), each written atomically as PNG and SVG."""

from __future__ import annotations

import io
import math
import os
from collections import defaultdict

import numpy as np

from rpdi.experiments.store import write_atomic


def _pyplot():
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure(size: tuple[float, float], panels: int = 1):
    """A new figure of ``panels`` axes (a grid of at most three columns for several)."""
    plt = _pyplot()
    if panels == 1:
        return plt.subplots(figsize=size)
    cols = min(3, panels)
    rows = math.ceil(panels / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(size[0] * cols / 2, 0.5 + size[1] * rows / 1.6),
                             squeeze=False)
    for ax in axes.ravel()[panels:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:panels]


def _finish(fig, path: str, ax=None, title: str = "", xlabel: str = "", ylabel: str = "",
            **legend) -> list[str]:
    """Title and label ``ax`` (if given), add a legend if anything is labelled, write ``path``
    (.png) and its .svg twin; the paths written."""
    import matplotlib
    import matplotlib.pyplot as plt

    if ax is not None:
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        ax.title.set_fontsize(10)
        if ax.get_legend_handles_labels()[0]:  # nothing to label (e.g. users = 0): no legend
            ax.legend(fontsize=7, **legend)
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
    """Simulated estimate against the exact expectation, per (run, topic), 95% intervals."""
    fig, ax = _figure((6, 6))
    by_measure = defaultdict(list)
    for r in records:
        if r["topic"] != "all" and r["estimate"] is not None and r["exact"] is not None:
            by_measure[r["measure"]].append(r)
    lo, hi = np.inf, -np.inf
    for measure, rows in by_measure.items():
        x = np.array([r["exact"] for r in rows])
        y = np.array([r["estimate"] for r in rows])
        e = 1.96 * np.array([r["stderr"] for r in rows])
        ax.errorbar(x, y, yerr=e, fmt="o", ms=3, alpha=0.6, label=measure)
        lo, hi = min(lo, x.min(), y.min()), max(hi, x.max(), y.max())
    if np.isfinite(lo):
        ax.plot([lo, hi], [lo, hi], "k--", lw=1)
    return _finish(fig, path, ax, f"Simulated users against the exact browsing model\n"
                                  f"{_named(by_measure) or 'no simulation'}, one point per (run, topic)",
                   "exact expectation", "simulated estimate (95% interval)")


def zscores(records: list[dict], path: str) -> list[str]:
    """Distribution of per-topic z-scores against the standard normal density."""
    rows = [r for r in records if r["topic"] != "all" and r["z"] is not None]
    z = np.array([r["z"] for r in rows])
    fig, ax = _figure((6, 4))
    if z.size:
        ax.hist(z, bins=30, density=True, alpha=0.6, label=f"{z.size} z-scores")
    grid = np.linspace(-4, 4, 200)
    ax.plot(grid, np.exp(-grid ** 2 / 2) / np.sqrt(2 * np.pi), "k-", lw=1, label="N(0, 1)")
    measures = dict.fromkeys(r["measure"] for r in rows)
    return _finish(fig, path, ax, f"z-scores per (run, topic): {_named(measures) or 'no simulation'}",
                   "z = (estimate - exact) / stderr", "density")


def stopping(results: list[dict], path: str) -> list[str]:
    """The stopping-depth distribution L(i) of every measure's browsing model, averaged over the
    runs of each task's mean over topics; one panel per measure, each with its own scale, so
    that one model's spike (P@k stops at k with probability 1) does not flatten the others."""
    from matplotlib.ticker import MaxNLocator

    by_measure = defaultdict(list)
    for res in results:
        if res["stop"]:
            by_measure[res["measure"]].append(np.array(res["stop"]))
    fig, axes = _figure((7, 4), max(1, len(by_measure)))
    axes = np.atleast_1d(axes)
    for ax, (measure, stops) in zip(axes, by_measure.items()):
        width = min(50, max(len(s) for s in stops))  # the first 50 ranks; past its end L(i) = 0
        mean = np.mean([np.pad(s[:width], (0, width - len(s[:width]))) for s in stops], axis=0)
        ax.stairs(mean, np.arange(0.5, width + 1), fill=True)  # one artist, not a bar per rank
        ax.set_xlim(0.3, width + 0.7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(measure, fontsize=8)
        ax.tick_params(labelsize=7)
    if not by_measure:
        axes[0].set_title("no browsing model evaluated", fontsize=8)
    fig.suptitle("Where each measure's user stops", fontsize=10)
    fig.supxlabel("rank i at which the user stops", fontsize=9)
    fig.supylabel("L(i), mean over topics, then runs", fontsize=9)
    fig.tight_layout()
    return _finish(fig, path)


def parameter(measure: str, name: str, xs: list[float], curves: dict[str, tuple], path: str) -> list[str]:
    """A metric against its parameter, one line per run, the residual as a band (Figure 6)."""
    fig, ax = _figure((6, 4))
    for run, (value, upper) in curves.items():
        line = ax.plot(xs, value, marker="o", ms=3, label=run)[0]
        ax.fill_between(xs, value, upper, color=line.get_color(), alpha=0.15)
    return _finish(fig, path, ax, f"{measure} against {name}", name,
                   "exact value, mean over topics (band: residual)", ncol=2)


def residual_depth(depths: list[int], curves: dict[str, tuple], path: str) -> list[str]:
    """Lower and upper bounds of a score against the evaluation depth (Figure 5)."""
    fig, ax = _figure((6, 4))
    for label, (lower, upper) in curves.items():
        line = ax.plot(depths, lower, marker="o", ms=3, label=f"{label} lower")[0]
        ax.plot(depths, upper, marker="^", ms=3, ls="--", color=line.get_color(), label=f"{label} upper")
    return _finish(fig, path, ax, f"Score bounds of {_named(curves)} against evaluation depth",
                   "evaluation depth", "bounds, mean over runs and topics")


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

    plt = _pyplot()
    ranks = np.arange(1, view.L.size + 1)
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(6, 6.5))
    axes[0].plot(ranks, view.C, "o-", ms=3)
    axes[0].set(ylabel="C(i)", ylim=(-0.05, 1.05), title=title.replace("$", r"\$"))  # $ is not mathtext
    axes[1].bar(ranks, view.W, width=0.8)
    axes[1].set(ylabel="W(i)")
    axes[2].bar(ranks, view.L, width=0.8, color="tab:orange")
    axes[2].set(ylabel="L(i)", xlabel="rank i")
    axes[0].title.set_fontsize(10)
    fig.tight_layout()
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight")
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return path
