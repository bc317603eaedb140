"""A synthetic TREC-like collection: graded judgments, systems of graded quality, pooling.

Each topic has a pool of candidate documents, of which a random number are relevant with grades
1..max_grade (a share of topics has none). Each system scores every candidate by its quality
times the document's grade plus noise and retrieves the top ``depth``; scores are rounded to
three decimals, so ties happen. Only the documents some system ranks within ``pool_depth`` are
judged (plus every relevant one, as an exhaustive assessor would have found them), so deeper
documents are often unjudged. Everything follows from the seed.
"""

from __future__ import annotations

import numpy as np

from rpdi.metrics.trec import Qrels, Run


def synthetic_collection(topics: int = 50, runs: int = 10, depth: int = 100, seed: int = 1,
                         max_grade: int = 3, pool_depth: int = 20,
                         no_relevant: float = 0.1) -> tuple[Qrels, list[Run]]:
    """Qrels and runs (in memory) of a synthetic collection; see the module docstring."""
    rng = np.random.default_rng(seed)
    candidates = 2 * depth
    quality = np.linspace(0.3, 2.0, runs)
    grade = np.zeros((topics, candidates), dtype=np.int64)
    for t in range(topics):
        if rng.random() >= no_relevant:
            n_rel = int(rng.integers(1, max(2, candidates // 4)))
            rel = rng.choice(candidates, n_rel, replace=False)
            grade[t, rel] = rng.integers(1, max_grade + 1, n_rel)
    # systems: score = quality * grade/max + noise, rounded (ties), top `depth` retrieved
    signal = grade / max_grade
    scores = quality[:, None, None] * signal[None] + rng.normal(0.0, 1.0, (runs, topics, candidates))
    scores = np.round(scores, 3)
    order = np.argsort(-scores, axis=-1, kind="stable")[..., :depth]
    pooled = np.zeros((topics, candidates), dtype=bool)
    t_idx = np.arange(topics)[None, :, None]
    pooled[np.broadcast_to(t_idx, order[..., :pool_depth].shape), order[..., :pool_depth]] = True
    pooled |= grade > 0
    docno = np.array([[f"D{t:03d}-{c:04d}" for c in range(candidates)] for t in range(topics)], dtype=object)
    topic_ids = np.array([f"{t + 1:03d}" for t in range(topics)], dtype=object)
    tt, cc = np.nonzero(pooled)
    qrels = Qrels(topic_ids[tt], docno[tt, cc], grade[tt, cc].astype(float), "<synthetic qrels>")
    run_list = []
    for s in range(runs):
        t_rep = np.repeat(np.arange(topics), depth)
        c = order[s].ravel()
        run_list.append(Run(f"sys{s + 1:02d}", topic_ids[t_rep], docno[t_rep, c],
                            scores[s][t_rep, c].astype(float), "<synthetic>"))
    return qrels, run_list
