"""The verdict as lines for a terminal: the decision, what it rests on, each failing and marginal cell."""

from __future__ import annotations

from rpdi.simulate.verdict import Verdict


def verdict_lines(v: Verdict) -> list[str]:
    """The verdict as lines for a terminal: the decision, then each failing and marginal cell."""
    c = v.counts
    lines = [f"verdict: {'AGREE' if v.status == 0 else 'DISAGREE'} (exit {v.status}): "
             f"{c['reading']} ranking-order, {c['streams']} stream-independence, {c['defined']} model-defined, "
             f"{c['oracle']} naive-formula, "
             f"{c['closed_vs_exact']} closed-vs-exact and {c['zero_variance']} zero-variance exact checks; "
             f"{c['mean']} mean and {c['variance']} variance tests and a dispersion test of {c['dispersion']} "
             f"rankings' z-scores in one family at family-wise error rate "
             f"alpha = {v.alpha:g} ({c['screened']} screened out by Holm on z, each re-tested on an "
             f"independent stream with Bennett's bound)"]
    for x in v.failures:
        lines.append("  FAIL " + x.text())
    for x in v.marginal:
        lines.append("  marginal " + x.text() + "; not confirmed on an independent stream: more users "
                     "(or another seed) would settle it")
    return lines
