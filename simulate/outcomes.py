"""Per-user outcome distributions: what individual simulated users got, not only the means.

For one ranking, the documents each user read (N), the gain each accrued (G) and the rate G/N,
as quantiles and histograms. RBP's single number hides, for instance, that most of its users
read one or two documents while a few read dozens.
"""

from __future__ import annotations

import numpy as np

from rpdi.simulate.batch import BATCHES
from rpdi.simulate.ranking import Ranking, blocks

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def outcome_distributions(model, ranking: Ranking, users: int, task: np.random.SeedSequence,
                          engine: str = "vector", bins: int = 20) -> dict:
    """``{"depth" | "gain" | "rate": {"quantiles": {q: value}, "histogram": {"counts", "edges"},
    "never": share of users who never stop}}`` over ``users`` simulated sessions (the same
    streams as :func:`simulate.simulate_ranking`, so the same users)."""
    parts = [s[:2] for s in BATCHES[engine](model, [(ranking, n, rng) for n, rng in blocks(task, users)])]
    G = np.concatenate([g for g, _ in parts])
    N = np.concatenate([n for _, n in parts])
    finite = np.isfinite(N)
    rate = np.where(finite & (N > 0), G / np.where(finite & (N > 0), N, 1), 0.0)
    out = {}
    for name, x in (("depth", N[finite]), ("gain", G), ("rate", rate)):
        if x.size == 0:
            out[name] = {"quantiles": {}, "histogram": {"counts": [], "edges": []}, "never": 1.0}
            continue
        counts, edges = np.histogram(x, bins=bins)
        out[name] = {"quantiles": {q: float(v) for q, v in zip(QUANTILES, np.quantile(x, QUANTILES))},
                     "histogram": {"counts": counts.tolist(), "edges": edges.tolist()},
                     "never": float(1 - finite.mean())}
    return out
