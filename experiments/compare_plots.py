"""Plots of a comparison (matplotlib Agg, PNG and SVG, written atomically): the per-pair intervals of the
mean difference (a forest plot) and the ASL curves of discriminative power (Sakai 2006)."""

from __future__ import annotations

import numpy as np

from rpdi.experiments.formats import units
from rpdi.experiments.plots import PALETTE, _finish, _pyplot, legend_outside, style


def forest(records: list[dict], path: str, what: str = "") -> list[str]:
    """One panel per measure, one row per pair: the mean difference B - A and its interval;
    filled markers where the pair is significant. ``what`` names the test and correction. With
    the users' P(B user better) in the records, a second column shows it with its interval."""
    plt = _pyplot()
    measures = list(dict.fromkeys(r["measure"] for r in records))
    heights = [sum(r["measure"] == m for r in records) for m in measures]
    users = any(r.get("user_b_better") is not None for r in records)
    fig, axes = plt.subplots(len(measures), 2 if users else 1, sharey="row", squeeze=False, layout="constrained",
                             figsize=(10 if users else 7, 1.2 + 0.32 * sum(heights) + 0.5 * len(measures)),
                             gridspec_kw={"height_ratios": heights})
    for row, m in zip(axes, measures):
        rows = [r for r in records if r["measure"] == m][::-1]
        y = np.arange(len(rows))
        sig = np.array([r["significant"] for r in rows])
        columns = [("diff", "ci_low", "ci_high", 0.0)] + ([("user_b_better", "user_ci_low", "user_ci_high", 0.5)]
                                                          if users else [])
        for ax, (key, low, high, null) in zip(row, columns):
            get = lambda k: np.array([np.nan if r.get(k) is None else r[k] for r in rows], dtype=float)  # noqa: E731
            x = get(key)
            ax.hlines(y, get(low), get(high), color=PALETTE[0])
            ax.plot(x[sig], y[sig], "o", color=PALETTE[0], label="significant")
            ax.plot(x[~sig], y[~sig], "o", mfc="white", color=PALETTE[0], label="not significant")
            ax.axvline(null, color="k", lw=0.8, ls="--")
        row[0].set_yticks(y, [f"{r['run_b']} − {r['run_a']}" for r in rows], fontsize=7)
        row[0].set_title(m, fontsize=9, loc="left")
    axes[-1, 0].set_xlabel(f"difference of means, B − A (bar: interval over {units(records)})")
    if users:
        axes[-1, 1].set_xlabel("P(a user of B fares better than one of A), ties half")
        axes[0, 1].set_title("what users experience", fontsize=9, loc="left")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=8)
    fig.suptitle("Per-pair mean differences" + (f" ({what})" if what else ""), fontsize=10)
    return _finish(fig, path)


def asl_curves(power: list[dict], path: str, what: str = "") -> list[str]:
    """Sakai's ASL curves: per measure, the achieved significance levels of all run pairs
    sorted ascending; a line at alpha. Lower curves discriminate more."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    for k, p in enumerate(power):
        asl = np.sort(p["asl"])
        look = style(k) | ({} if asl.size <= 30 else {"marker": None})
        ax.plot(np.arange(1, asl.size + 1), asl, ms=4, label=f"{p['measure']} ({p['significant']}/{p['pairs']} significant)",
                **look)
    if power:
        ax.axhline(power[0]["alpha"], color="k", lw=0.8, ls="--", label=f"alpha = {power[0]['alpha']:g}")
    ax.set_xlabel("run pairs, sorted by ASL")
    ax.set_ylabel("achieved significance level (p)")
    ax.set_title("Discriminative power (Sakai 2006)" + (f": {what}" if what else ""), fontsize=10)
    legend_outside(ax)
    return _finish(fig, path)


def intents(records: list[dict], path: str, what: str = "") -> list[str]:
    """Per intent-aware measure (a panel each), per intent (rows: each topic's j-th most likely,
    1 the majority intent) and pair (a colour each): P(a user of B with that intent fares better
    than one of A with it), its interval over topics; filled where significant; 1/2 dashed. The
    legend sits under the panels, clear of the data."""
    plt = _pyplot()
    measures = list(dict.fromkeys(r["measure"] for r in records))
    pairs = list(dict.fromkeys((r["run_a"], r["run_b"]) for r in records))
    fig, axes = plt.subplots(1, len(measures), sharex=True, squeeze=False, layout="constrained",
                             figsize=(3.6 * len(measures) + 1.2, 1.6 + 0.45 * max(
                                 len({r["intent"] for r in records if r["measure"] == m}) * len(pairs) for m in measures)))
    step = 0.7 / max(len(pairs), 1)
    for ax, m in zip(axes[0], measures):
        rows = [r for r in records if r["measure"] == m]
        shown = sorted({r["intent"] for r in rows})
        for k, pair in enumerate(pairs):
            mine = [r for r in rows if (r["run_a"], r["run_b"]) == pair]
            y = np.array([shown.index(r["intent"]) for r in mine]) + (k - (len(pairs) - 1) / 2) * step
            x = np.array([r["user_b_better"] for r in mine])
            sig = np.array([r["significant"] for r in mine], dtype=bool)
            look = {"color": style(k)["color"], "marker": style(k)["marker"], "ls": "none"}
            ax.hlines(y, [r["ci_low"] for r in mine], [r["ci_high"] for r in mine], color=look["color"])
            ax.plot(x[sig], y[sig], label=f"B = {pair[1]}, A = {pair[0]}", **look)
            ax.plot(x[~sig], y[~sig], mfc="white", **look)
        probability = {r["intent"]: r["probability"] for r in rows}
        ax.set_yticks(range(len(shown)), [f"intent {j}\n(P {probability[j]:.2f})" for j in shown], fontsize=8)
        ax.set_ylim(len(shown) - 0.5, -0.5)
        ax.axvline(0.5, color="k", lw=0.8, ls="--")
        ax.set_xlim(0, 1)
        ax.set_title(m, fontsize=9, loc="left")
        ax.set_xlabel("P(a user of B fares better than one of A)\n< 0.5: A serves them better, > 0.5: B does", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(pairs), 3), fontsize=8,
               title="filled: significant; open: not; bar: interval over topics", title_fontsize=8)
    fig.suptitle("Per intent, which run's users fare better" + (f" ({what})" if what else ""), fontsize=10)
    return _finish(fig, path)
