"""Plots of click models fitted to logs: held-out perplexity per model, and observed vs predicted
click-through and last-click rank per rank (matplotlib, Agg)."""

from __future__ import annotations

import os
import tempfile


def plot_fit(records: list[dict], path: str, title: str = "") -> str:
    """Write the figure of :func:`rpdi.usermodels.clickeval.fit_and_evaluate`'s records to
    ``path`` (PNG or SVG by extension), atomically; returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))
    def label(r):
        params = r["parameters"] if len(r["parameters"]) <= 32 else r["parameters"][:30] + "..."
        return r["model"] + (f"  {params}" if params else "")

    names = [label(r) for r in records]
    ppl = [r["perplexity"] for r in records]
    ax = axes[0]
    ax.barh(range(len(records)), ppl, color="tab:blue")
    ax.set_yticks(range(len(records)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(min(ppl) - 0.01, max(ppl) + 0.01)
    ax.set_xlabel("held-out perplexity (lower is better)")
    shown = records[:5] + records[-1:]  # the best five and, for contrast, the worst
    first = records[0]["curves"]
    ranks = np.arange(1, len(first["ctr_observed"]) + 1)
    axes[1].plot(ranks, first["ctr_observed"], "ko-", lw=2, label="observed")
    axes[2].plot(np.arange(len(first["last_observed"])), first["last_observed"], "ko-", lw=2, label="observed")
    for r in shown:
        axes[1].plot(ranks, r["curves"]["ctr_predicted"], ".--", label=r["model"])
        axes[2].plot(np.arange(len(r["curves"]["last_predicted"])), r["curves"]["last_predicted"], ".--", label=r["model"])
    axes[1].set(xlabel="rank", ylabel="click-through rate", title="CTR per rank (test)")
    axes[2].set(xlabel="rank of the last click (0: no click)", ylabel="share of sessions",
                title="last-click rank (test)")
    for ax in axes[1:]:
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=os.path.splitext(path)[1])
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)
    return path
