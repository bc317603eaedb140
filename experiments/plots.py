"""Plots of an experiment (matplotlib, Agg backend, PNG), each written atomically."""

from __future__ import annotations

import io
import os
from collections import defaultdict

import numpy as np

from rpdi.experiments.store import write_atomic


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    write_atomic(path, buf.getvalue())
    _figure().close(fig)
    return path


def agreement(records: list[dict], path: str) -> str:
    """Simulated estimate against the exact expectation, per (run, topic), 95% intervals."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 6))
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
    ax.set_xlabel("exact expectation")
    ax.set_ylabel("simulated estimate (95% interval)")
    ax.set_title("Simulated users against the exact browsing model")
    if ax.get_legend_handles_labels()[0]:  # nothing to label (e.g. users = 0): no legend
        ax.legend(fontsize=7)
    return _save(fig, path)


def zscores(records: list[dict], path: str) -> str:
    """Distribution of per-topic z-scores against the standard normal density."""
    plt = _figure()
    z = np.array([r["z"] for r in records if r["topic"] != "all" and r["z"] is not None])
    fig, ax = plt.subplots(figsize=(6, 4))
    if z.size:
        ax.hist(z, bins=30, density=True, alpha=0.6, label=f"{z.size} z-scores")
    grid = np.linspace(-4, 4, 200)
    ax.plot(grid, np.exp(-grid ** 2 / 2) / np.sqrt(2 * np.pi), "k-", lw=1, label="N(0, 1)")
    ax.set_xlabel("z = (estimate - exact) / stderr")
    ax.legend()
    return _save(fig, path)


def stopping(results: list[dict], path: str) -> str:
    """Mean stopping-depth distribution L(i) of every measure's browsing model."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(7, 4))
    by_measure = defaultdict(list)
    for res in results:
        if res["stop"]:
            by_measure[res["measure"]].append(np.array(res["stop"]))
    for measure, stops in by_measure.items():
        width = min(len(s) for s in stops)
        ax.plot(np.arange(1, width + 1), np.mean([s[:width] for s in stops], axis=0), label=measure)
    ax.set_xlabel("rank at which the user stops")
    ax.set_ylabel("probability L(i)")
    ax.set_xlim(0, 50)
    if ax.get_legend_handles_labels()[0]:  # nothing to label (e.g. users = 0): no legend
        ax.legend(fontsize=7)
    return _save(fig, path)


def parameter(name: str, xs: list[float], curves: dict[str, tuple], path: str) -> str:
    """A metric against its parameter, one line per run, the residual as a band (Figure 6)."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    for run, (value, upper) in curves.items():
        line = ax.plot(xs, value, marker="o", ms=3, label=run)[0]
        ax.fill_between(xs, value, upper, color=line.get_color(), alpha=0.15)
    ax.set_xlabel(name)
    ax.set_ylabel("mean score (band: residual)")
    if ax.get_legend_handles_labels()[0]:  # nothing to label (e.g. users = 0): no legend
        ax.legend(fontsize=7, ncol=2)
    return _save(fig, path)


def residual_depth(depths: list[int], curves: dict[str, tuple], path: str) -> str:
    """Lower and upper bounds of a score against the evaluation depth (Figure 5)."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (lower, upper) in curves.items():
        line = ax.plot(depths, lower, marker="o", ms=3, label=f"{label} lower")[0]
        ax.plot(depths, upper, marker="^", ms=3, ls="--", color=line.get_color(), label=f"{label} upper")
    ax.set_xlabel("evaluation depth")
    ax.set_ylabel("mean score bounds")
    if ax.get_legend_handles_labels()[0]:  # nothing to label (e.g. users = 0): no legend
        ax.legend(fontsize=7)
    return _save(fig, path)


def all_plots(out_dir: str, records, results, extra: list[tuple]) -> list[str]:
    """The standard plots, plus ``extra`` (function, args) ones; paths written."""
    plots = os.path.join(out_dir, "plots")
    written = [agreement(records, os.path.join(plots, "agreement.png")),
               zscores(records, os.path.join(plots, "zscores.png")),
               stopping(results, os.path.join(plots, "stopping.png"))]
    for fn, args in extra:
        written.append(fn(*args))
    return written
