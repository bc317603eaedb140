"""Plots of click models fitted to logs (matplotlib, Agg): held-out perplexity per model with
observed vs predicted click-through and last-click rank; the models' gaps to the best with their
intervals and every pair's difference; and the calibration per rank of every model."""

from __future__ import annotations

import io
import os

import numpy as np

from rpdi.experiments.plots import PALETTE, _pyplot, legend_outside, style
from rpdi.experiments.store import write_atomic


def plot_fit(records: list[dict], pairs: list[dict], path: str, title: str = "", alpha: float = 0.05) -> list[str]:
    """Write the figures of :func:`rpdi.usermodels.clickeval.fit_and_evaluate`'s records (compared
    by :func:`rpdi.usermodels.clickcompare.compare` into ``pairs``): ``path`` (PNG or SVG by
    extension), and beside it ``NAME_differences`` and ``NAME_calibration``, each atomically;
    returns the paths."""
    stem, ext = os.path.splitext(path)
    return [_overview(records, path, title), _differences(records, pairs, f"{stem}_differences{ext}", title, alpha),
            _calibration(records, f"{stem}_calibration{ext}", title, alpha)]


def _overview(records, path, title):
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2), layout="constrained")

    def label(r):
        params = r["parameters"] if len(r["parameters"]) <= 32 else r["parameters"][:30] + "..."
        return r["model"] + (f"  {params}" if params else "")

    names = [label(r) for r in records]
    ppl = [r["perplexity"] for r in records]
    ax = axes[0]
    ax.barh(range(len(records)), ppl, color=PALETTE[0])
    ax.set_yticks(range(len(records)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(min(ppl) - 0.01, max(ppl) + 0.01)
    ax.set_xlabel("held-out perplexity (lower is better)")
    shown = records[:5] + records[-1:]  # the best five and, for contrast, the worst
    first = records[0]["curves"]
    ranks = np.arange(1, len(first["ctr_observed"]) + 1)
    axes[1].plot(ranks, first["ctr_observed"], "o-", color="0.5", lw=3, label="observed")
    axes[2].plot(np.arange(len(first["last_observed"])), first["last_observed"], "o-", color="0.5", lw=3,
                 label="observed")
    for k, r in enumerate(shown):
        look = style(k) | {"ls": "--"}
        axes[1].plot(ranks, r["curves"]["ctr_predicted"], ms=4, label=r["model"], **look)
        axes[2].plot(np.arange(len(r["curves"]["last_predicted"])), r["curves"]["last_predicted"], ms=4,
                     label=r["model"], **look)
    axes[0].set_title("held-out perplexity per model", fontsize=10)
    axes[1].set(xlabel="rank", ylabel="click-through rate", title="click-through per rank (test sessions)")
    axes[2].set(xlabel="rank of the last click (0: no click)", ylabel="share of sessions",
                title="last-click rank (test sessions)")
    for ax in axes[1:]:
        ax.title.set_fontsize(10)
    legend_outside(axes[2], title="the best five, the worst", title_fontsize=8)
    fig.suptitle("Click models fitted to a log, on its held-out sessions" + (f" ({title})" if title else ""))
    return _save(fig, path)


def _differences(records, pairs, path, title, alpha):
    """Left and middle: every model's gap to the best held-out log-likelihood and perplexity, with
    its interval (open marker: not told apart from the best). Right: every pair's held-out
    log-likelihood difference, row - column, ≈ where its interval holds 0."""
    plt = _pyplot()
    M = len(records)
    fig = plt.figure(figsize=(15, 3.5 + 0.75 * M), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=[0.32 * M + 1, 0.42 * M + 1.5])
    axes = [fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])]
    y = np.arange(M)
    for ax, c, what in ((axes[0], "loglik", "log-likelihood per session (nats)"),
                        (axes[1], "perplexity", "perplexity")):
        order = sorted(range(M), key=lambda i: records[i][f"{c}_vs_best"])
        rs = [records[i] for i in order]
        x = np.array([r[f"{c}_vs_best"] for r in rs])
        low, high = (np.array([r[f"{c}_vs_best_{e}"] for r in rs]) for e in ("low", "high"))
        tied = np.array([r[f"{c}_tied_best"] for r in rs])
        # models far worse than most are drawn at the right edge, their gap written beside them
        cap = 3 * float(np.quantile(high, 0.75)) or 1.0
        far = x > cap
        ax.hlines(y[~far], low[~far], np.minimum(high[~far], cap), color=PALETTE[0])
        ax.plot(x[~tied & ~far], y[~tied & ~far], "o", color=PALETTE[0], label="worse than the best")
        ax.plot(x[tied], y[tied], "o", mfc="white", color=PALETTE[0], label="not told apart from the best")
        ax.plot(np.full(far.sum(), cap), y[far], ">", color=PALETTE[3], label="off the scale (gap [interval] written)")
        for yi in y[far]:
            ax.annotate(f"{x[yi]:.3g} [{low[yi]:.3g}, {high[yi]:.3g}]", (cap, yi), xytext=(-6, 0),
                        textcoords="offset points", ha="right", va="center", fontsize=8, color=PALETTE[3])
        ax.axvline(0, color="k", lw=0.8, ls="--")
        ax.set_xlim(min(low.min(), 0) - 0.03 * cap, cap * 1.03)
        ax.set_yticks(y, [r["model"] for r in rs], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"gap to the best held-out {what} ({1 - alpha:.0%} bootstrap interval)", fontsize=9)
        ax.set_title(f"{c}: best {rs[0]['model']}", fontsize=10, loc="left")
    names = [r["model"] for r in records]
    diff, tie = np.zeros((M, M)), np.ones((M, M), bool)
    for p in pairs:
        i, j = names.index(p["model_a"]), names.index(p["model_b"])
        diff[i, j], diff[j, i] = p["loglik_diff"], -p["loglik_diff"]
        tie[i, j] = tie[j, i] = p["loglik_low"] <= 0 <= p["loglik_high"]
    ax = axes[2]
    scale = float(np.quantile(np.abs(diff[diff != 0]), 0.5)) if (diff != 0).any() else 1.0
    from matplotlib.colors import SymLogNorm

    bound = max(float(np.abs(diff).max()), scale * 1.01)
    im = ax.imshow(diff, cmap="RdBu", norm=SymLogNorm(linthresh=scale, vmin=-bound, vmax=bound),
                   aspect="auto")
    for i in range(M):
        for j in range(M):
            if i != j and tie[i, j]:
                ax.text(j, i, "≈", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(M), names, rotation=90, fontsize=8)
    ax.set_yticks(range(M), names, fontsize=8)
    ax.set_title("every pair: held-out log-likelihood per session, row − column\n(blue: the row's model is "
                 f"better; ≈: the {1 - alpha:.0%} interval holds 0)", fontsize=10)
    fig.colorbar(im, ax=ax, shrink=0.8, label="log-likelihood difference (symmetric log scale)")
    axes[0].legend(loc="upper left", bbox_to_anchor=(0, -0.1), ncols=3, fontsize=8)  # under the panel, clear of the data
    fig.suptitle("Which models the held-out sessions tell apart" + (f" ({title})" if title else ""))
    return _save(fig, path)


def _calibration(records, path, title, alpha):
    """Observed - predicted per model and rank, for click-through and for the rank of the last
    click: colour, the residual; a dot, its interval excludes 0 (the model is off there)."""
    plt = _pyplot()
    M = len(records)
    fig, axes = plt.subplots(1, 2, figsize=(15, 1.8 + 0.34 * M), gridspec_kw={"width_ratios": [10, 11]},
                             layout="constrained")
    for ax, c, what in ((axes[0], "ctr", "click-through at rank"), (axes[1], "last", "share with the last click at rank")):
        res = np.array([np.subtract(r["curves"][f"{c}_observed"], r["curves"][f"{c}_predicted"]) for r in records])
        off = np.array([(np.array(r["curves"][f"{c}_residual_low"]) > 0) | (np.array(r["curves"][f"{c}_residual_high"]) < 0)
                        for r in records])
        bound = float(np.quantile(np.abs(res), 0.9)) or 1e-3
        im = ax.imshow(res, cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
        ii, jj = np.nonzero(off)
        ax.plot(jj, ii, "k.", ms=4)
        first = 1 if c == "ctr" else 0
        ax.set_xticks(range(res.shape[1]), [str(k + first) for k in range(res.shape[1])], fontsize=8)
        ax.set_yticks(range(M), [r["model"] for r in records], fontsize=8)
        ax.set_xlabel("rank" + (" (0: no click)" if c == "last" else ""))
        ax.set_title(f"observed − predicted {what} (test)", fontsize=10, loc="left")
        fig.colorbar(im, ax=ax, shrink=0.8, extend="both", label="observed − predicted")
    fig.suptitle(f"Calibration per rank; dot: the {1 - alpha:.0%} interval of observed − predicted excludes 0"
                 + (f" ({title})" if title else ""), fontsize=11)
    return _save(fig, path)


def _save(fig, path: str) -> str:
    """Write ``fig`` to ``path`` atomically (format by extension, PNG without one), with the mode
    the umask gives."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format=os.path.splitext(path)[1][1:].lower() or "png", dpi=110)
    finally:
        plt.close(fig)
    write_atomic(path, buf.getvalue())
    return path
