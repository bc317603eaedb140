"""Plots of a comparison (matplotlib Agg, PNG, written atomically): the per-pair intervals of the
mean difference (a forest plot) and the ASL curves of discriminative power (Sakai 2006)."""

from __future__ import annotations

import numpy as np

from rpdi.experiments.plots import _figure, _save


def forest(records: list[dict], path: str, what: str = "") -> str:
    """One panel per measure, one row per pair: the mean difference B - A and its interval;
    filled markers where the pair is significant. ``what`` names the test and correction."""
    plt = _figure()
    measures = list(dict.fromkeys(r["measure"] for r in records))
    heights = [sum(r["measure"] == m for r in records) for m in measures]
    fig, axes = plt.subplots(len(measures), 1, figsize=(7, 1.2 + 0.32 * sum(heights) + 0.5 * len(measures)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, m in zip(axes[:, 0], measures):
        rows = [r for r in records if r["measure"] == m][::-1]
        y = np.arange(len(rows))
        diff = np.array([r["diff"] for r in rows])
        lo = np.array([r["ci_low"] if r["ci_low"] is not None else np.nan for r in rows])
        hi = np.array([r["ci_high"] if r["ci_high"] is not None else np.nan for r in rows])
        sig = np.array([r["significant"] for r in rows])
        ax.hlines(y, lo, hi, color="C0")
        ax.plot(diff[sig], y[sig], "o", color="C0", label="significant")
        ax.plot(diff[~sig], y[~sig], "o", mfc="white", color="C0", label="not significant")
        ax.axvline(0, color="k", lw=0.8, ls="--")
        ax.set_yticks(y, [f"{r['run_b']} − {r['run_a']}" for r in rows], fontsize=7)
        ax.set_title(m, fontsize=9, loc="left")
    axes[-1, 0].set_xlabel("difference of means, B − A (bar: interval over topics)")
    axes[0, 0].legend(fontsize=7, loc="best")
    fig.suptitle("Per-pair mean differences" + (f" ({what})" if what else ""), fontsize=10)
    return _save(fig, path)


def asl_curves(power: list[dict], path: str, what: str = "") -> str:
    """Sakai's ASL curves: per measure, the achieved significance levels of all run pairs
    sorted ascending; a line at alpha. Lower curves discriminate more."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    for p in power:
        asl = np.sort(p["asl"])
        ax.plot(np.arange(1, asl.size + 1), asl, marker="o" if asl.size <= 30 else None, ms=3,
                label=f"{p['measure']} ({p['significant']}/{p['pairs']} significant)")
    if power:
        ax.axhline(power[0]["alpha"], color="k", lw=0.8, ls="--", label=f"alpha = {power[0]['alpha']:g}")
    ax.set_xlabel("run pairs, sorted by ASL")
    ax.set_ylabel("achieved significance level (p)")
    ax.set_title("Discriminative power (Sakai 2006)" + (f": {what}" if what else ""), fontsize=10)
    ax.legend(fontsize=7)
    return _save(fig, path)
